"""What reaches a model or the network: embedders, rerankers and the LLM describer, and their settings.

Apart from the document builders beside this package (``inference/*.py``: pure functions from an
object to a document), so editing a client's retry code does not change the builders' fingerprint
(``controller/sync/documents.py``) and rebuild every document on the next start.
"""
