"""Regex search over the memory-mapped text layer, fast enough for a whole room.

Python's ``re`` reads 75-400 MB/s (less with ``re.I``); a room is up to ~360 MB. Three things
make ``room.grep`` fit in about a second:

1. **RE2.** Patterns RE2 accepts (no backreferences or lookarounds, the usual case) run on
   ``google-re2`` (300-600 MB/s, linear time); the others on ``re``.
2. **Literal prefilter.** Most patterns contain a literal every match must include
   (``change of control``, ``indemnit``, one of ``warranty|indemnity``). Such literals are
   looked for with ``bytes.find`` (GB/s) in ``lower.bin``, a copy of the text with ASCII
   letters lowered at the same offsets, and the regex then runs only on the lines (or, if the
   pattern can cross a newline, the documents) that contain one.
3. **Processes.** The documents are split at document boundaries into one chunk per CPU; the
   calling process scans the first chunk while forked children scan the rest and send back
   match positions (never text). A child that fails is redone in-process.

Patterns are compiled as bytes over UTF-8, so ``\\w`` and case folding are ASCII (as in
``grep``); a pattern with non-ASCII characters is run as a ``str`` pattern on decoded text
instead. ``^`` and ``$`` match at line boundaries (``re.M`` is always on).
"""

from __future__ import annotations

import mmap
import os
import pickle
import re
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

try:
    import re2 as _re2
except ImportError:  # pragma: no cover - google-re2 is a dependency; re still works
    _re2 = None

try:  # Python >= 3.11
    from re import _constants as C  # type: ignore[attr-defined]  # noqa: N812
    from re import _parser as P  # type: ignore[attr-defined]  # noqa: N812
except ImportError:  # pragma: no cover
    import sre_constants as C  # type: ignore[no-redef]  # noqa: N812
    import sre_parse as P  # type: ignore[no-redef]  # noqa: N812

MIN_LITERAL = 3
"""Shorter required literals are too common to pay for the prefilter."""
MAX_WINDOWS = 64
"""Beyond this many candidate lines in one document, scan the whole document."""
PARALLEL_BYTES = 16 << 20
"""Below this many bytes to scan, stay in one process."""

Match = tuple[int, int, int]
"""(document index, byte start, byte end) in text.bin."""


@dataclass(frozen=True)
class Matcher:
    """A compiled grep pattern and how to scan for it."""

    regex: Any
    """A compiled ``re`` or ``re2`` pattern with ``finditer(text, pos, endpos)``."""
    literals: tuple[bytes, ...] | None
    """Lowered literals, one of which every match contains; ``None``: no prefilter."""
    line_mode: bool
    """Matches cannot contain a newline, so candidate lines suffice as windows."""

    str_mode: bool = False
    """The pattern has non-ASCII characters: run ``re`` on decoded text."""
    engine: str = "re"


def compile_matcher(pattern: str, flags: int = re.I) -> Matcher:
    """Compile ``pattern`` for the text layer; ``re.error`` if it is not a valid regex."""
    flags |= re.M
    if isinstance(pattern, bytes):
        pattern = pattern.decode("utf-8")
    if pattern.isascii():
        raw: str | bytes = pattern.encode("ascii")
        regex: re.Pattern[bytes] | re.Pattern[str] = re.compile(raw, flags & ~re.U)
    else:
        raw, regex = pattern, re.compile(pattern, flags)
    tree = P.parse(raw, regex.flags)
    ignorecase = bool(regex.flags & re.I) or "(?i" in pattern
    literals = None
    if not (isinstance(raw, str) and ignorecase):  # str case folding goes beyond ASCII
        literals = _best(_required(list(tree), isinstance(raw, str)))
    line_mode = not _may_cross_line(list(tree), bool(regex.flags & re.S))
    if isinstance(raw, str):
        return Matcher(regex, literals, line_mode, str_mode=True)
    fast = _re2_compile(raw, regex.flags) if tree.getwidth()[0] > 0 else None
    if fast is not None:
        return Matcher(fast, literals, line_mode, engine="re2")
    return Matcher(regex, literals, line_mode)


def _re2_compile(raw: bytes, flags: int) -> Any:
    """The RE2 twin of a bytes pattern with the same meaning, or ``None`` if RE2 lacks it.

    Only for patterns that cannot match the empty string: google-re2's ``finditer`` steps over
    empty matches differently from ``re``.
    """
    if _re2 is None or flags & ~(re.I | re.M | re.S | re.A):
        return None
    opts = _re2.Options()
    opts.log_errors = False
    opts.encoding = _re2.Options.Encoding.LATIN1  # bytes, as re's bytes patterns see them
    opts.case_sensitive = not flags & re.I
    opts.dot_nl = bool(flags & re.S)
    try:
        return _re2.compile(b"(?m)" + raw, options=opts)
    except _re2.error:  # backreferences, lookarounds, possessive repeats, \Z, ...
        return None


# -- pattern analysis -----------------------------------------------------------------------
def _lit(code: int, str_mode: bool) -> bytes:
    return (chr(code).encode("utf-8") if str_mode else bytes([code])).lower()


def _best(*choices: tuple[bytes, ...] | None) -> tuple[bytes, ...] | None:
    """The alternative set with the longest shortest literal (ties: fewer alternatives)."""
    ok = [c for c in choices if c and min(map(len, c)) >= MIN_LITERAL]
    if not ok:
        return None
    return max(ok, key=lambda c: (min(map(len, c)), -len(c)))


def _required(items: list, str_mode: bool) -> tuple[bytes, ...] | None:  # type: ignore[type-arg]
    """Literals of which every match of the sequence ``items`` contains at least one."""
    best: tuple[bytes, ...] | None = None
    run = b""
    for op, av in items:
        if op is C.LITERAL:
            run += _lit(av, str_mode)
            continue
        best, run = _best(best, (run,) if run else None), b""
        if op is C.SUBPATTERN:
            best = _best(best, _required(list(av[-1]), str_mode))
        elif op is C.ATOMIC_GROUP:
            best = _best(best, _required(list(av), str_mode))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and av[0] >= 1:
            best = _best(best, _required(list(av[2]), str_mode))
        elif op is C.BRANCH:
            alts = [_required(list(b), str_mode) for b in av[1]]
            if all(alts):
                best = _best(best, tuple(sorted({x for a in alts for x in a})))  # type: ignore[union-attr]
    return _best(best, (run,) if run else None)


_NL_CATEGORIES = {C.CATEGORY_SPACE, C.CATEGORY_NOT_DIGIT, C.CATEGORY_NOT_WORD,
                  C.CATEGORY_LINEBREAK}


def _set_may_match_newline(items: list) -> bool:  # type: ignore[type-arg]
    for op, av in items:
        if op is C.NEGATE or (op is C.LITERAL and av == 10):
            return True
        if (op is C.RANGE and av[0] <= 10 <= av[1]) or (op is C.CATEGORY and av in _NL_CATEGORIES):
            return True
    return False


def _may_cross_line(items: list, dotall: bool) -> bool:  # type: ignore[type-arg]
    """Conservatively: can a match contain a newline or depend on text past its line?"""
    for op, av in items:
        if op is C.LITERAL:
            hit = av == 10
        elif op is C.NOT_LITERAL:
            hit = av != 10
        elif op is C.ANY:
            hit = dotall
        elif op is C.IN:
            hit = _set_may_match_newline(list(av))
        elif op is C.SUBPATTERN:
            hit = _may_cross_line(list(av[-1]), dotall or bool(av[1] & re.S))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            hit = _may_cross_line(list(av[2]), dotall)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            hit = _may_cross_line(list(av[1]), dotall)
        elif op is C.ATOMIC_GROUP:
            hit = _may_cross_line(list(av), dotall)
        elif op is C.BRANCH:
            hit = any(_may_cross_line(list(b), dotall) for b in av[1])
        elif op is C.AT:
            hit = av in (C.AT_BEGINNING_STRING, C.AT_END_STRING)
        else:  # group references, conditionals, categories outside sets: assume the worst
            hit = op is not C.CATEGORY or av in _NL_CATEGORIES
        if hit:
            return True
    return False


# -- scanning -------------------------------------------------------------------------------
@dataclass
class ScanResult:
    matches: list[Match]
    total: int
    exact: bool
    """False when counting stopped at the cap."""


def _windows(text: Text, lower: Text, start: int, end: int,
             literals: tuple[bytes, ...], line_mode: bool) -> list[tuple[int, int]]:
    """Byte ranges of one document the regex must scan (empty: no literal occurs)."""
    if not line_mode:
        return [(start, end)] if any(lower.find(x, start, end) >= 0 for x in literals) else []
    found: list[tuple[int, int]] = []
    for lit in literals:
        pos = lower.find(lit, start, end)
        while pos >= 0:
            if len(found) >= MAX_WINDOWS:
                return [(start, end)]
            lo = text.rfind(b"\n", start, pos) + 1 or start
            hi = text.find(b"\n", pos, end)
            hi = end if hi < 0 else hi
            found.append((lo, hi))
            pos = lower.find(lit, hi, end)
    found.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in found:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


Text = mmap.mmap | bytes
"""A room's text layer: mapped, or read whole when the file is empty."""


def scan_docs(text: Text, lower: Text, starts: array[int], ends: array[int],
              docs: Sequence[int], matcher: Matcher, limit: int, cap: int) -> ScanResult:
    """Matches in documents ``docs`` (in order): the first ``limit`` kept, up to ``cap`` counted."""
    kept: list[Match] = []
    total = 0
    for i in docs:
        start, end = starts[i], ends[i]
        windows = [(start, end)]
        if matcher.literals is not None:
            windows = _windows(text, lower, start, end, matcher.literals, matcher.line_mode)
        for lo, hi in windows:
            if matcher.str_mode:
                found = _scan_str(text, i, lo, hi, matcher, kept, limit)
            else:
                found = 0
                for m in matcher.regex.finditer(text, lo, hi):  # type: ignore[arg-type]
                    if len(kept) < limit:
                        kept.append((i, m.start(), m.end()))
                    found += 1
                    if total + found >= cap:
                        break
            total += found
            if total >= cap:
                return ScanResult(kept, total, False)
    return ScanResult(kept, total, True)


def decode_span(data: mmap.mmap | bytes, lo: int, hi: int, errors: str = "strict") -> str:
    """``data[lo:hi]`` decoded as UTF-8 straight from the map: slicing the map first would
    copy the bytes into a fresh buffer, whose pages fault in on first touch (a 150 KB slice
    of a 5,000-document room decodes in about 35 us this way, 85-110 us via a copy)."""
    with memoryview(data) as view:
        return str(view[lo:hi], "utf-8", errors)


def _scan_str(text: Text, doc: int, lo: int, hi: int, matcher: Matcher,
              kept: list[Match], limit: int) -> int:
    decoded = decode_span(text, lo, hi, "replace")
    found = 0
    for m in matcher.regex.finditer(decoded):  # type: ignore[arg-type]
        if len(kept) < limit:
            s = lo + len(decoded[: m.start()].encode("utf-8"))
            kept.append((doc, s, s + len(m.group().encode("utf-8"))))
        found += 1
    return found


def split_chunks(docs: Sequence[int], starts: array[int], ends: array[int],
                 parts: int) -> list[list[int]]:
    """Split ``docs`` into at most ``parts`` runs of about equal byte size."""
    sizes = [ends[i] - starts[i] + 1 for i in docs]
    total = sum(sizes)
    chunks: list[list[int]] = [[]]
    acc = 0
    for i, size in zip(docs, sizes, strict=True):
        if acc >= total * len(chunks) / parts and len(chunks) < parts and chunks[-1]:
            chunks.append([])
        chunks[-1].append(i)
        acc += size
    return chunks


def default_workers() -> int:
    return max(1, min(len(os.sched_getaffinity(0)), 8))


def parallel(chunks: list[list[int]], fn: Callable[[list[int]], ScanResult]) -> ScanResult:
    """Run ``fn`` over the chunks: the first here, the rest in forked children."""
    children: list[tuple[int, int, list[int]]] = []
    rest: list[list[int]] = []
    for chunk in chunks[1:]:
        child = _fork(chunk, fn)
        if child is None:
            rest.append(chunk)
        else:
            children.append((*child, chunk))
    results = [fn(chunks[0])]
    for pid, fd, chunk in children:
        data = _read_all(fd)
        _, status = os.waitpid(pid, 0)
        ok = data and os.waitstatus_to_exitcode(status) == 0
        results.append(pickle.loads(data) if ok else fn(chunk))
    results += [fn(chunk) for chunk in rest]
    return ScanResult(
        matches=[m for r in results for m in r.matches],
        total=sum(r.total for r in results),
        exact=all(r.exact for r in results),
    )


def _fork(chunk: list[int], fn: Callable[[list[int]], ScanResult]) -> tuple[int, int] | None:
    rfd, wfd = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # process limit reached: scan it here instead
        os.close(rfd)
        os.close(wfd)
        return None
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            os.close(rfd)
            data = pickle.dumps(fn(chunk))
            view = memoryview(data)
            while view:
                view = view[os.write(wfd, view):]
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    return pid, rfd


def _read_all(fd: int) -> bytes:
    parts = []
    try:
        while chunk := os.read(fd, 1 << 20):
            parts.append(chunk)
    finally:
        os.close(fd)
    return b"".join(parts)
