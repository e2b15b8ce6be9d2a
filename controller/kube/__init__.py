"""The Kubernetes API beyond kopf: the client and its credentials (``client``), typed errors (``errors``),
resources and every REST path (``resources``), discovery and versions, paged listings, and the reviews
that judge MCP callers.
"""
