"""Keeping Python's cyclic garbage collector off a run's hot path.

A run holds a large, settled heap (the open room, the coverage index, the events so far) and
makes short-lived objects by the hundred thousand (request bodies, replies, events). Left
alone, the collector rescans the settled heap every few thousand allocations: on a
5,000-document room that is 30-60 ms per full pass, several times an episode, in the middle of
sub-call waves. While a :func:`quiet_collector` block is open:

* the youngest generation's threshold is raised (:data:`YOUNG_THRESHOLD` allocations), so
  young collections run tenfold less often;
* :func:`settle` (called between waves) collects the young generations and freezes what is
  left (``gc.freeze``), so later passes skip it.

When the last open block closes, the frozen objects are handed back to the collector and the
thresholds restored. Blocks nest and may overlap (several runs in one process).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

YOUNG_THRESHOLD = 10_000
"""Allocations between young collections inside a block (CPython's default is 700)."""

_lock = threading.Lock()
_open = 0
_saved: tuple[int, ...] | None = None


@contextlib.contextmanager
def quiet_collector() -> Iterator[None]:
    """Raise the young threshold for the block; :func:`settle` may freeze the heap."""
    global _open, _saved
    with _lock:
        if _open == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(YOUNG_THRESHOLD, _saved[0]), *_saved[1:])
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0 and _saved is not None:
                gc.unfreeze()
                gc.set_threshold(*_saved)


def settle() -> None:
    """Collect the young generations and freeze the survivors; a no-op outside a block."""
    with _lock:
        if _open:
            gc.collect(1)
            gc.freeze()
