"""Pure functions and models: Kubernetes objects -> documents -> vectors.

Nothing here imports kopf, a database client, or the controller: inference is deterministic
and testable without a cluster or a store.
"""
