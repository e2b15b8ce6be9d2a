"""The sync path: watch events and the resync into documents, and documents into the store, hash-aware.

``events`` feeds the queue (the fast path), ``reconcile`` makes the store exactly what the cluster implies
(the source of truth), ``engine`` batches and writes, embedding only changed texts, ``documents`` builds
documents from bodies, ``policy`` and ``status`` are the SyncPolicy, ``migrate`` the generations.
"""
