"""The CLI reference, docs/cli.md, generated from the commands' own help.

    python -m dealroom.cli._reference > docs/cli.md

A test fails when docs/cli.md no longer matches, so the reference cannot drift.
"""

from __future__ import annotations

import click
import typer

from dealroom.cli import app

HEADER = """# CLI reference

Generated from `--help` by `python -m dealroom.cli._reference > docs/cli.md`; do not edit.
"""


def _help(command: click.Command, ctx: click.Context) -> str:
    formatter = click.HelpFormatter(width=100)
    click.Command.format_help(command, ctx, formatter)
    return formatter.getvalue().rstrip()


def _walk(command: click.Command, ctx: click.Context, path: str) -> list[str]:
    if hasattr(command, "commands"):  # a group (typer vendors its own click classes)
        out = []
        for name in sorted(command.commands):
            sub = command.commands[name]
            out += _walk(sub, click.Context(sub, info_name=name, parent=ctx), f"{path} {name}")
        return out
    return [f"## `{path}`\n\n```\n{_help(command, ctx)}\n```\n"]


def reference() -> str:
    """Markdown with the help of every ``dealroom`` command, in name order."""
    root = typer.main.get_command(app)
    return HEADER + "\n" + "\n".join(_walk(root, click.Context(root, info_name="dealroom"),
                                           "dealroom"))


if __name__ == "__main__":
    print(reference(), end="")
