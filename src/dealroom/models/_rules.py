"""The rules of a chat call that are ours, apart from the client that follows them: what is
retried (:class:`Retryable`), which refusals drop an option (:class:`Refused`), how long a
server asks to wait, what an error body says, the call's deadline (:class:`Deadline`), and
which ``response_format`` shape to send."""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from html.parser import HTMLParser
from typing import Any

from dealroom.models._spec import ModelSpec
from dealroom.models._timing import Pace

MAX_RETRY_AFTER_S = 60.0


class Retryable(Exception):
    def __init__(self, message: str, status: int | None = None, wait: float | None = None,
                 kind: str = "http"):
        super().__init__(message)
        self.status = status
        self.wait = wait
        self.kind = kind


class Refused(Exception):
    """The endpoint refused an optional feature of the request (``stream``, a format)."""

    def __init__(self, feature: str):
        super().__init__(feature)
        self.feature = feature


class Deadline:
    """A call's deadline (``ModelSpec.call_deadline``): it starts when the call's first
    request leaves (not while it queues for the endpoint) and ends every attempt, back-off
    and hedge of the call; ``sent`` counts the requests made."""

    def __init__(self, spec: ModelSpec) -> None:
        self.seconds = spec.call_deadline
        self.scope: asyncio.Timeout | None = None
        self.sent = [0]
        self.last = ""
        """Why the last attempt failed."""
        self.waits = Pace().waits(spec, 0)
        """What the current attempt waits for (set per attempt by the client; ``_timing``)."""

    def start(self) -> None:
        """A request is leaving: count it, and start the clock at the first."""
        self.sent[0] += 1
        if self.sent[0] == 1 and self.seconds and self.scope is not None:
            self.scope.reschedule(asyncio.get_running_loop().time() + self.seconds)


def retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def error_message(raw: bytes) -> str:
    """What an error body says: its JSON ``error.message``, an HTML page's text (never its
    markup), else its first 500 characters."""
    try:
        body = json.loads(raw)
        err = body.get("error", body) if isinstance(body, dict) else body
        message = err.get("message", err) if isinstance(err, dict) else err
        return str(message)[:500]
    except (ValueError, RecursionError):
        text = raw[:65536].decode("utf-8", "replace")
        if is_html(text):
            return html_text(text, 300)
        return text[:500]


def is_html(text: str) -> bool:
    """Whether a body is an HTML page (a proxy's or a web server's, not an API's)."""
    head = text.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body", "<?xml")) or (
        head.startswith("<") and "<html" in text[:2000].lower())


class _Text(HTMLParser):
    """The words of an HTML page, outside scripts and styles."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self._skip += tag in ("script", "style", "title")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style", "title") and self._skip > 0

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.words += data.split()


def html_text(page: str, limit: int = 300) -> str:
    """An HTML page's text, tags dropped and white space collapsed, cut to ``limit``.

    >>> html_text("<html><title>407</title><body><h1>Denied</h1><p>Ask &amp; wait</p></html>")
    'Denied Ask & wait'
    """
    parser = _Text()
    parser.feed(page)
    parser.close()
    text = " ".join(parser.words)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_REFUSAL_STATUSES = (400, 404, 415, 422, 500, 501)


def refused_feature(status: int, message: str, payload: dict[str, Any]) -> str | None:
    """The optional feature a 4xx/5xx answer names, if the request carried it."""
    if status not in _REFUSAL_STATUSES:
        return None
    text = message.lower()
    form = (payload.get("response_format") or {}).get("type")
    if form and any(word in text for word in ("response_format", "json_schema", "schema")):
        return str(form)
    if payload.get("stream") and "stream" in text:
        return "stream"
    return None


def format_for(response_format: dict[str, Any] | None,
               refused: set[str]) -> dict[str, Any] | None:
    """The ``response_format`` to send: the shape asked for, else the first one not refused."""
    if not response_format:
        return None
    if response_format.get("type") != "json_schema":
        return None if response_format.get("type") in refused else response_format
    if "json_schema" not in refused:
        return response_format
    if "json_object" not in refused:
        schema = (response_format.get("json_schema") or {}).get("schema")
        return {"type": "json_object", **({"schema": schema} if schema else {})}
    return None


def listed_models(raw: bytes, key: str = "id") -> dict[str, Any]:
    """Model id → its ``key`` field, for every model a ``/models`` body lists."""
    try:
        data = json.loads(raw).get("data", [])
        return {str(m.get("id")): m.get(key) for m in data if isinstance(m, dict)}
    except (ValueError, AttributeError):
        return {}
