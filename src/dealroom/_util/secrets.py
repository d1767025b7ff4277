"""Generator secrets stay out of the records that lie near rooms: a digest stands in for each.

A generator's ``secret`` keys the draws of a room, so whoever reads it can regenerate the
room's answer key and rubric. ``sweep.json`` and GRPO's ``train.json`` sit next to the rooms
they made (and used to be readable from a sandbox): they record ``secret_sha256`` instead, and
a resume compares digests. The secret itself stays in the user's spec and in each generated
room's ``answer_key/generation.json``, which the sandbox hides.

>>> redact_secrets({"generate": [{"docs": 3, "secret": "s"}]})["generate"][0]["docs"]
3
>>> "secret" in redact_secrets({"secret": "s"})
False
"""

from __future__ import annotations

import hashlib
from typing import Any

DIGEST_KEY = "secret_sha256"


def secret_digest(secret: str) -> str:
    """The SHA-256 of ``secret`` (UTF-8), in hex."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def redact_secrets(value: Any) -> Any:
    """``value`` (JSON-like) with each ``"secret": str`` replaced by ``"secret_sha256"``: its
    digest. A record already redacted comes back the same, so old and new records compare."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "secret" and isinstance(item, str):
                out[DIGEST_KEY] = secret_digest(item)
            else:
                out[key] = redact_secrets(item)
        return out
    if isinstance(value, list | tuple):
        return [redact_secrets(v) for v in value]
    return value
