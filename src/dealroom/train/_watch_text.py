"""The training watch's matching: a canary or rubric text found however a rollout wrote it.

Every text is brought to a *skeleton* before matching — escapes undone (``\\u0044``, ``\\x44``,
``&#68;``, ``%44``), Unicode folded (NFKC), format characters dropped (zero-width joiners and
spaces, bidi marks), case folded, and everything but letters and digits removed — and each
tripwire is looked for in its own skeleton, reversed, rot13'd, and both. Runs that look like
base64, hex or lists of character codes are decoded and searched the same way (two levels
deep: hex of base64 too). A text is searched whole (all of an event's strings joined) so a
canary split over two fields, or two events (:func:`Needles.find` over a whole run), is found.

What stays undetectable is listed in docs/training.md ("What the watch cannot see").
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping

_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\x([0-9a-fA-F]{2})"
                     r"|%([0-9a-fA-F]{2})")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_FORMAT = re.compile("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
                     "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
                     "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
                     "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
                     "\U000e0020-\U000e007f]")
"""Unicode's format characters (category Cf): zero-width spaces and joiners, bidi marks, soft
hyphens, tags."""
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/_-]|\n|\\n){16,}={0,2}")
"""Base64 (standard or URL-safe), wrapped at line ends or not."""
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}(?:[\s,:]|\\x|0x)*){8,}")
_CODES = re.compile(r"(?:\b\d{2,3}\b[\s,;]+){7,}\b\d{2,3}\b")
DEPTH = 2
"""Levels of decoding tried (base64 inside hex, say)."""
MAX_DECODED = 8 * 2**20
"""Characters of decoded runs searched per text (a guard on what a huge record costs)."""


def skeleton(text: str) -> str:
    """``text`` unescaped, folded, lower-cased, with only its letters and digits left."""
    text = html.unescape(_ESCAPE.sub(_unescape, text)) if ("\\" in text or "%" in text
                                                          or "&" in text) else text
    if not text.isascii():
        text = _FORMAT.sub("", unicodedata.normalize("NFKC", text))
    return _NOT_ALNUM.sub("", text.casefold())


def _unescape(match: re.Match[str]) -> str:
    code = next(g for g in match.groups() if g is not None)
    try:
        return chr(int(code, 16))
    except (ValueError, OverflowError):
        return match.group(0)


def rot13(text: str) -> str:
    return codecs.encode(text, "rot13")


class Needles:
    """The tripwires (text -> where it comes from), each in every form the watch undoes."""

    def __init__(self, tripwires: Mapping[str, str]) -> None:
        self.forms: dict[str, str] = {}
        for text, what in tripwires.items():
            core = skeleton(text)
            if len(core) < 8:
                continue  # too short to mean anything once folded
            for form in (core, core[::-1], rot13(core), rot13(core)[::-1]):
                self.forms.setdefault(form, what)

    def __bool__(self) -> bool:
        return bool(self.forms)

    def find(self, texts: Iterable[str]) -> str | None:
        """Where the first tripwire found in ``texts`` (searched joined, and each decoded)
        comes from; None when there is none."""
        texts = list(texts)
        joined = "".join(texts)
        if (what := self._in(skeleton(joined))) is not None:
            return what
        for decoded in _decoded(joined, DEPTH):
            if (what := self._in(skeleton(decoded))) is not None:
                return what
        return None

    def _in(self, skel: str) -> str | None:
        for form, what in self.forms.items():
            if form in skel:
                return what
        return None


def _decoded(text: str, depth: int) -> Iterator[str]:
    """Texts hidden in ``text`` as base64, hex or character codes (``depth`` levels)."""
    if depth <= 0:
        return
    budget = MAX_DECODED
    for found in _candidates(text):
        budget -= len(found)
        if budget < 0:
            return
        yield found
        yield from _decoded(found, depth - 1)


def _candidates(text: str) -> Iterator[str]:
    for match in _BASE64.finditer(text):
        run = match.group(0).replace("\\n", "").replace("\n", "").rstrip("=")
        for start in range(4):  # the run may begin mid-word
            yield from _b64(run[start:])
    for match in _HEX.finditer(text):
        digits = re.sub(r"0x|\\x|[^0-9a-fA-F]", "", match.group(0))
        for start in range(2):
            chunk = digits[start:]
            try:
                yield binascii.unhexlify(chunk[:len(chunk) // 2 * 2]).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                continue
    for match in _CODES.finditer(text):
        codes = [int(n) for n in re.findall(r"\d+", match.group(0))]
        yield "".join(chr(c) for c in codes if 32 <= c < 0x110000)


def _b64(run: str) -> Iterator[str]:
    usable = run[:-1] if len(run) % 4 == 1 else run  # one character too many: not base64
    usable += "=" * (-len(usable) % 4)
    if len(usable) < 12:
        return
    for alt in (b"+/", b"-_"):
        try:
            raw = base64.b64decode(usable, altchars=alt, validate=False)
        except (binascii.Error, ValueError):
            continue
        yield raw.decode("utf-8", "replace")
