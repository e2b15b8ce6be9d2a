"""Embedders: texts -> vectors. The local ONNX model is the offline default; Voyage is for production."""

from kubevec.core.errors import EmbedderError
from kubevec.inference.providers.embedders.base import Embedder

__all__ = ["Embedder", "EmbedderError"]
