"""Known secrets out of everything dealroom writes: one set per process, one marker.

The models layer adds each secret it resolves (API keys, extra header values after ``${ENV}``
expansion, proxy and URL passwords) with :func:`add_secret`; the writers of run, sweep and
training folders (:mod:`dealroom._util.files`, ``runs``' JSONL appends and recorder, the
deliverables) pass what they write through :func:`redact` or :func:`redact_value`, so an
endpoint that echoes its request headers leaves ``[redacted]`` in the records, never the key.

A secret shorter than :data:`MIN_SECRET_CHARS` is not redacted: placeholder keys such as
``EMPTY``, ``none`` or ``dummy`` (what local servers accept) are not secrets, and replacing
every such word would damage memos. A secret is found as written and as JSON escapes it
(with and without ``ensure_ascii``), wherever it appears in the text.

>>> secrets = Secrets()
>>> secrets.add("sk-test-0123456789")
>>> secrets.redact("Authorization: Bearer sk-test-0123456789")
'Authorization: Bearer [redacted]'
>>> secrets.add("short")  # under MIN_SECRET_CHARS: left alone
>>> secrets.redact("a short memo")
'a short memo'
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from typing import Any, TypeVar, cast

T = TypeVar("T")

MARKER = "[redacted]"
"""What stands in for a secret in every file dealroom writes."""
MIN_SECRET_CHARS = 8
"""Shorter strings are never redacted (placeholder keys, not secrets)."""


class Secrets:
    """A set of secret strings and the one pattern that finds any of them; thread-safe."""

    def __init__(self) -> None:
        self._forms: set[str] = set()
        self._ordered: tuple[str, ...] = ()
        self._text: re.Pattern[str] | None = None
        self._bytes: re.Pattern[bytes] | None = None
        self._lock = threading.Lock()

    def add(self, secret: str | None) -> None:
        """Redact ``secret`` from now on (None, or under :data:`MIN_SECRET_CHARS`: ignored)."""
        if not isinstance(secret, str) or len(secret.strip()) < MIN_SECRET_CHARS:
            return
        forms = {secret, json.dumps(secret)[1:-1],
                 json.dumps(secret, ensure_ascii=False)[1:-1]}
        with self._lock:
            if forms <= self._forms:
                return
            self._forms |= forms
            ordered = sorted(self._forms, key=len, reverse=True)  # the longest form first
            self._text = re.compile("|".join(map(re.escape, ordered)))
            self._bytes = re.compile(b"|".join(re.escape(f.encode("utf-8")) for f in ordered))
            self._ordered = tuple(ordered)

    def clear(self) -> None:
        """Forget every secret (tests start each case from none)."""
        with self._lock:
            self._forms.clear()
            self._ordered = ()
            self._text = self._bytes = None

    def __bool__(self) -> bool:
        return self._text is not None

    def present(self, text: str) -> bool:
        """Whether ``text`` holds a known secret (a substring search: faster than the
        pattern when, as nearly always, none is there)."""
        return any(form in text for form in self._ordered)

    def redact(self, text: str) -> str:
        """``text`` with every known secret replaced by :data:`MARKER`."""
        pattern = self._text
        return text if pattern is None or not self.present(text) else pattern.sub(MARKER, text)

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` with every known secret (UTF-8) replaced by :data:`MARKER`."""
        pattern = self._bytes
        if pattern is None or not any(form.encode("utf-8") in data for form in self._ordered):
            return data
        return pattern.sub(MARKER.encode(), data)

    def redact_value(self, value: Any) -> Any:
        """A JSON-like ``value`` with every string in it (keys too) redacted; the same object
        when no secret is known."""
        return value if self._text is None else self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(k) if isinstance(k, str) else k: self._walk(v)
                    for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._walk(v) for v in value]
        return value


SECRETS = Secrets()
"""The process's secrets: every writer of dealroom's records redacts these."""


def add_secret(secret: str | None) -> None:
    """Redact ``secret`` from everything this process writes from now on."""
    SECRETS.add(secret)


def redact(text: str) -> str:
    """``text`` with every secret this process knows replaced by ``[redacted]``."""
    return SECRETS.redact(text)


def redact_bytes(data: bytes) -> bytes:
    """``data`` with every secret this process knows (UTF-8) replaced by ``[redacted]``."""
    return SECRETS.redact_bytes(data)


def redact_value(value: Any) -> Any:
    """A JSON-like ``value`` with every secret this process knows redacted from its strings."""
    return SECRETS.redact_value(value)


def dumps_redacted(value: T, **options: Any) -> tuple[T, str]:
    """``(value, json.dumps(value, **options))``, the secrets this process knows redacted from
    ``value``'s strings first when the JSON text holds one (one search of the text when, as
    nearly always, it holds none)."""
    text = _encoder(**options).encode(value)  # as json.dumps(value, **options) writes it
    if SECRETS.present(text):
        value = cast(T, SECRETS.redact_value(value))  # a dict stays a dict
        text = json.dumps(value, **options)
    return value, text


@functools.lru_cache(maxsize=16)
def _encoder(**options: Any) -> json.JSONEncoder:
    """The encoder ``json.dumps(value, **options)`` would make, made once per set of options
    (a writer of many records calls it once a record)."""
    return json.JSONEncoder(**options)


class RedactFilter(logging.Filter):
    """A logging filter that redacts the known secrets from each record's message (with its
    arguments merged in); dealroom's loggers carry one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if SECRETS:
            record.msg, record.args = SECRETS.redact(record.getMessage()), None
        return True


def logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with a :class:`RedactFilter` (added once)."""
    log = logging.getLogger(name)
    if not any(isinstance(f, RedactFilter) for f in log.filters):
        log.addFilter(RedactFilter())
    return log
