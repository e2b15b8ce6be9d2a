"""The all-MiniLM-L6-v2 word-piece tokenizer, shared by the embedder and the describers.

Describers count real word pieces (not words) so a capability text never overflows the 256-piece
window the model reads; whatever is past the window would be silently lost.
"""

from __future__ import annotations

import functools
import importlib.resources
from typing import Final

from tokenizers import Tokenizer

#: all-MiniLM-L6-v2 was trained with 256 word pieces; sentence-transformers truncates there.
MAX_TOKENS: Final = 256


def load_tokenizer() -> Tokenizer:
    """The upstream tokenizer, set to truncate at 256 and pad to the longest text in a batch."""
    data = importlib.resources.files("kubevec.inference").joinpath("data/tokenizer.json").read_text(encoding="utf-8")
    tokenizer = Tokenizer.from_str(data)
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: pads to the batch's longest
    return tokenizer


@functools.cache
def _counter() -> Tokenizer:
    tokenizer = load_tokenizer()
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """Word pieces the model would see, including [CLS] and [SEP]."""
    return len(_counter().encode(text).ids)
