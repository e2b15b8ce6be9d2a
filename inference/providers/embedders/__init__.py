"""Embedders: texts -> vectors. The local ONNX model is the offline default; Voyage is for production."""

from kubevec.inference.providers.embedders.base import Embedder, EmbedderError

__all__ = ["Embedder", "EmbedderError"]
