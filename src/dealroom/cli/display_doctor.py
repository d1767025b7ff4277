"""Rendering of ``dealroom doctor``."""

from __future__ import annotations

from typing import Any

from dealroom.cli.display import console, render_confinement

_STYLE = {"ok": "green", "absent": "dim", "warn": "yellow", "fail": "bold red"}


def render_diagnosis(diagnosis: dict[str, Any], strict: bool = False) -> None:
    """A line per check, the sandbox's confinement part by part, then each problem's fix;
    under ``strict`` a warn line fails the verdict too."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_header=False, box=None, padding=(0, 2))
    for check in diagnosis["checks"]:
        style = _STYLE.get(check["status"], "")
        table.add_row(check["name"], f"[{style}]{check['status']}[/]", escape(check["detail"]))
    console.print(table)
    sandbox = next((c for c in diagnosis["checks"] if c["name"] == "sandbox"), None)
    if sandbox and sandbox["data"]:
        console.print("\n[bold]sandbox[/]")
        render_confinement(sandbox["data"]["confinement"], sandbox["data"]["degraded"])
    fixes = [c for c in diagnosis["checks"] if c["fix"] and c["status"] != "ok"]
    if fixes:
        console.print("\n[bold]to fix[/]")
    for check in fixes:
        style = _STYLE.get(check["status"], "")
        console.print(f"  [{style}]{check['name']}[/]: {escape(check['fix'])}", soft_wrap=True)
    warned = any(c["status"] == "warn" for c in diagnosis["checks"])
    if not diagnosis["ok"]:
        verdict = "[bold red]something needed is missing[/] (the fail lines above)"
    elif strict and warned:
        verdict = "[bold red]--strict: a check warned[/] (the warn lines above)"
    else:
        verdict = "[bold green]nothing needed is missing[/]"
    console.print("\n" + verdict)
