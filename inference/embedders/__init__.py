"""Embedders: texts -> vectors. The local ONNX model is the offline default; Voyage is for production."""

from inference.embedders.base import Embedder, EmbedderError

__all__ = ["Embedder", "EmbedderError"]
