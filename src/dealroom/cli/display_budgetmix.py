"""Rendering of ``dealroom budgetmix plan`` and ``audit``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from dealroom.cli.display import console


def render_plan(plan: dict[str, Any], path: Path) -> None:
    """The plan's size, how often each budget and room comes up, and where it was written."""
    entries = plan["entries"]
    budgets = Counter(e["max_turns"] for e in entries)
    rooms = Counter(Path(e["room"]).name for e in entries)
    console.print(f"[bold]plan {plan['id']}[/]: {plan['steps']} steps x {plan['groups']} groups "
                  f"= {len(entries)} groups  →  {path}")
    console.print("budgets: " + ", ".join(f"T={b} x{n}" for b, n in sorted(budgets.items())))
    console.print("rooms:   " + ", ".join(f"{r} x{n}" for r, n in sorted(rooms.items())))


def render_audit(audit: dict[str, Any]) -> None:
    """Each violation on its own line, then the verdict."""
    bad = [r for r in audit["runs"] if r["violations"]]
    for run in bad:
        where = "" if run["step"] is None else f" (step {run['step']} group {run['group']})"
        for violation in run["violations"]:
            console.print(f"[red]violation[/] {run['run']}{where}: {violation}", soft_wrap=True)
    n = len(audit["runs"])
    if bad:
        console.print(f"[bold red]{len(bad)} of {n} runs do not follow plan {audit['plan']}[/]")
    else:
        console.print(f"[bold green]all {n} runs follow plan {audit['plan']}[/]")
    entries, missing = audit["entries"], audit["missing"]
    counts = Counter(e["runs"] for e in entries)
    console.print(f"{len(entries) - len(missing)} of {len(entries)} plan entries have runs "
                  "(runs per entry: " + ", ".join(f"{runs} x{n}" for runs, n in
                                                 sorted(counts.items())) + ")")
    if missing:
        listed = ", ".join(f"step {e['step']} group {e['group']} (T={e['max_turns']})"
                           for e in missing[:12])
        more = f" and {len(missing) - 12} more" if len(missing) > 12 else ""
        console.print(f"[yellow]{len(missing)} entries have no runs: {listed}{more}[/]",
                      soft_wrap=True)
