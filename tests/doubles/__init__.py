"""Test doubles, one module per kind of thing they stand in for (none replaces an e2e test):

- ``embedders``: an in-process embedder that is deterministic and counts its calls;
- ``model_servers``: loopback stand-ins for the model servers, each API's published shapes (integration tier);
- ``model_files``: tiny ONNX models and tokenizers written by the tests, laid out as the hubs lay them out;
- ``cluster``: a fake Kubernetes reader (discovery, lists, APIServices) for the resync's unit tests.
"""
