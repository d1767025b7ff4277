"""Live progress of a run: turn, sub-call waves, tokens, cost, coverage and memo size.

Events only update counters (tokens and cost move with every call; coverage is recomputed
once per wave or root turn); the line is drawn when the display refreshes. On a terminal it is
one line redrawn in place; off a terminal (a pipe, a log file) a plain line is printed every
``every`` seconds and once at the end, as pip and tqdm do in logs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from dealroom.cli.display import console as default_console
from dealroom.cli.display import render_degraded

if TYPE_CHECKING:
    from dealroom.measure import CoverageProbe


PLAIN_EVERY_S = 15.0
"""Seconds between two plain progress lines off a terminal (``--progress-every``)."""


class RunDisplay:
    """A listener ``(event, probe)`` that keeps one status line up to date.

    ``every``: seconds between plain lines off a terminal (0: none); ``wait(seconds)`` is
    what the printing thread waits with, True to stop (default: the display's end)."""

    def __init__(self, console: Console | None = None, max_turns: int | None = None,
                 every: float | None = None,
                 wait: Callable[[float], bool] | None = None) -> None:
        self.console = console or default_console
        self.max_turns = max_turns
        self.turn = 0
        self.waves = 0
        self.ok = 0
        self.failed = 0
        self.sub_done = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost = 0.0
        self.memo_chars = 0
        self.coverage = 0.0
        self.every = PLAIN_EVERY_S if every is None else every
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._wait = wait or self._stop.wait
        self._ticker: threading.Thread | None = None
        self._live: Live | None = None
        if self.console.is_terminal or self.console.is_jupyter:
            # Live renders this object (``__rich__``) 4 times a second: an event only counts
            self._live = Live(self, console=self.console, refresh_per_second=4, transient=True)

    def __enter__(self) -> RunDisplay:
        self._started = time.monotonic()
        if self._live is not None:
            self._live.__enter__()
        elif self.every > 0:
            self._ticker = threading.Thread(target=self._tick, name="dealroom-progress",
                                            daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.__exit__(kind, exc, tb)
        elif self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            if kind is None:  # the state at the end (an error says its own line)
                self.print_plain()

    def refresh(self) -> None:
        """Redraw the line now (on a terminal it also redraws itself 4 times a second)."""
        if self._live is not None:
            self._live.refresh()
        else:
            self.print_plain()

    def _tick(self) -> None:
        while not self._wait(self.every):
            self.print_plain()

    def print_plain(self) -> None:
        """Print :meth:`plain_line` as a line of its own (a log's progress line)."""
        self.console.print(self.plain_line(), markup=False, highlight=False, soft_wrap=True)

    def plain_line(self) -> str:
        """The status as plain text: turn, sub-calls done and failed, waves, tokens, cost,
        coverage and time elapsed."""
        turns = f"{self.turn}/{self.max_turns}" if self.max_turns else str(self.turn)
        elapsed = int(time.monotonic() - self._started)
        return (f"progress: turn {turns}, sub-calls {self.sub_done} done"
                f"{f' ({self.failed} failed)' if self.failed else ''} in {self.waves} waves, "
                f"tokens {si(self.tokens_in)} in / {si(self.tokens_out)} out, "
                f"${self.cost:.4f}, coverage {self.coverage:.1%}, "
                f"elapsed {elapsed // 60}m{elapsed % 60:02d}s")

    def __call__(self, event: dict[str, Any], probe: CoverageProbe) -> None:
        kind = event.get("type")
        if kind == "model_call":
            usage = event.get("usage") or {}
            self.tokens_in += usage.get("input_tokens", 0)
            self.tokens_out += usage.get("output_tokens", 0)
            self.cost += usage.get("cost_usd", 0.0)
            if event.get("role") == "root" and event.get("agent", "root") == "root":
                self.turn = event.get("turn", self.turn)
            elif event.get("role") == "sub":
                self.sub_done += 1
        elif kind == "wave":
            self.waves += 1
            self.ok += event.get("ok", 0)
            self.failed += event.get("failed", 0)
        elif kind == "memo" and event.get("agent", "root") == "root":
            self.memo_chars = event.get("chars", 0)
        elif kind == "sandbox" and event.get("depth") == 0:
            render_degraded(event.get("degraded") or [], self.console)
        elif kind == "run_start":
            for warning in event.get("warnings") or []:
                self.console.print(f"[bold yellow]warning:[/] {escape(warning)}",
                                   highlight=False, soft_wrap=True)
        if kind in ("wave", "run_end") or (kind == "model_call" and event.get("role") != "sub"):
            self.coverage = probe.coverage()  # per wave or turn, not per sub-call

    def __rich__(self) -> Text:
        turns = f"{self.turn}/{self.max_turns}" if self.max_turns else str(self.turn)
        return Text.assemble(
            ("● ", "cyan"), f"turn {turns}  ",
            f"waves {self.waves}  sub-calls {self.ok} ok",
            (f" / {self.failed} failed" if self.failed else ""),
            f"  tokens {si(self.tokens_in)} in / {si(self.tokens_out)} out",
            f"  ${self.cost:.4f}  coverage {self.coverage:.1%}  memo {self.memo_chars:,} chars",
        )


def si(n: float) -> str:
    """A count with a k or M suffix: ``12.3k``."""
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(int(n))
