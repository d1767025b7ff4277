"""Live progress of a run: turn, sub-call waves, tokens, cost, coverage and memo size.

Events only update counters (tokens and cost move with every call; coverage is recomputed
once per wave or root turn); the line is drawn when the display refreshes.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live
from rich.text import Text

from dealroom.cli.display import console as default_console
from dealroom.cli.display import render_degraded

if TYPE_CHECKING:
    from dealroom.measure import CoverageProbe


class RunDisplay:
    """A listener ``(event, probe)`` that keeps one status line up to date."""

    def __init__(self, console: Console | None = None, max_turns: int | None = None) -> None:
        self.console = console or default_console
        self.max_turns = max_turns
        self.turn = 0
        self.waves = 0
        self.ok = 0
        self.failed = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost = 0.0
        self.memo_chars = 0
        self.coverage = 0.0
        # Live renders this object (``__rich__``) 4 times a second: an event only counts
        self._live = Live(self, console=self.console, refresh_per_second=4, transient=True)

    def __enter__(self) -> RunDisplay:
        self._live.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._live.__exit__(kind, exc, tb)

    def refresh(self) -> None:
        """Redraw the line now (it also redraws itself 4 times a second)."""
        self._live.refresh()

    def __call__(self, event: dict[str, Any], probe: CoverageProbe) -> None:
        kind = event.get("type")
        if kind == "model_call":
            usage = event.get("usage") or {}
            self.tokens_in += usage.get("input_tokens", 0)
            self.tokens_out += usage.get("output_tokens", 0)
            self.cost += usage.get("cost_usd", 0.0)
            if event.get("role") == "root" and event.get("agent", "root") == "root":
                self.turn = event.get("turn", self.turn)
        elif kind == "wave":
            self.waves += 1
            self.ok += event.get("ok", 0)
            self.failed += event.get("failed", 0)
        elif kind == "memo" and event.get("agent", "root") == "root":
            self.memo_chars = event.get("chars", 0)
        elif kind == "sandbox" and event.get("depth") == 0:
            render_degraded(event.get("degraded") or [], self.console)
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
