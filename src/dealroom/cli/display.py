"""Rendering for the CLI: tables and panels with rich. No logic lives here."""

from __future__ import annotations

from rich.console import Console

console = Console(stderr=False, highlight=False)
err_console = Console(stderr=True, highlight=False)


def render_run_result(result) -> None:  # type: ignore[no-untyped-def]
    """The end-of-run summary: status, turns, sub-calls, tokens, cost, coverage, paths."""
    from rich.table import Table

    m = result.metrics
    usage = m.get("usage", {}).get("total", {})
    beh = m.get("behaviour", {})
    cov = (m.get("coverage") or {}).get("coverage")
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_row("status", f"{result.status} ({result.reason})")
    table.add_row("turns", str(result.turns))
    table.add_row("sub-calls", str(beh.get("sub_calls", 0)))
    table.add_row("tokens", f"{usage.get('input_tokens', 0):,} in / "
                  f"{usage.get('output_tokens', 0):,} out")
    table.add_row("cost", f"${usage.get('cost_usd', 0.0):.4f}")
    table.add_row("coverage", "n/a" if cov is None else f"{cov:.1%}")
    table.add_row("memo", str(result.memo_path))
    table.add_row("records", str(result.run_dir))
    console.print(table)


def render_demo(result) -> None:  # type: ignore[no-untyped-def]
    """What the demo did and where everything is."""
    render_run_result(result.run)
    s = result.scores
    console.print(
        f"\n[bold]reference judge:[/] {s.n_passed} of {s.n_criteria} criteria passed "
        f"({s.pass_rate:.1%})  →  {result.run.run_dir / 'scores.json'}"
    )
    console.print(f"room: {result.room}   (inspect it with `dealroom inspect {result.room}`)")
    console.print(
        "[dim]The embedded 135M model proves the plumbing, not the diligence: point --sub "
        "at a real endpoint (MODEL@http://host:port/v1) for real findings.[/]"
    )
