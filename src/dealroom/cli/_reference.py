"""The CLI reference, docs/cli.md, generated from the commands' own declarations.

    python -m dealroom.cli._reference > docs/cli.md

It reads each command's parameters (names, help, defaults) and its function's type hints, not
a help formatter's output, so the page is the same whatever typer or terminal renders ``--help``.
A test fails when docs/cli.md no longer matches, so the reference cannot drift.
"""

from __future__ import annotations

import enum
import inspect
import textwrap
import types
import typing
from typing import Any

import typer

from dealroom.cli import app

HEADER = """# CLI reference

Generated from the commands' declarations by `python -m dealroom.cli._reference > docs/cli.md`;
do not edit.
"""
WIDTH = 100
_TYPES = {int: "INTEGER", float: "FLOAT", str: "TEXT", bool: "", typing.Any: "VALUE"}


def reference() -> str:
    """Markdown with the help of every ``dealroom`` command, in name order."""
    root = typer.main.get_command(app)
    return HEADER + "\n" + "\n".join(_walk(root, "dealroom"))


def _walk(command: Any, path: str) -> list[str]:
    commands = getattr(command, "commands", None)
    if commands is not None:  # a group
        out = []
        for name in sorted(commands):
            if not getattr(commands[name], "hidden", False):
                out += _walk(commands[name], f"{path} {name}")
        return out
    return [f"## `{path}`\n\n```\n{_help(command, path)}\n```\n"]


def _help(command: Any, path: str) -> str:
    hints = _hints(command.callback)
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    arguments = [p for p in params if isinstance(p, typer.core.TyperArgument)]
    options = [p for p in params if not isinstance(p, typer.core.TyperArgument)]
    usage = " ".join([f"Usage: {path} [OPTIONS]", *(_arg_name(p) for p in arguments)])
    lines = [usage, "", textwrap.indent(inspect.cleandoc(command.help or ""), "  ")]
    if arguments:
        rows = [(_arg_name(p), _describe(p, required_note=True)) for p in arguments]
        lines += ["", "Arguments:", *_table(rows)]
    rows = [(_option_names(p, hints), _describe(p)) for p in options]
    rows.append(("--help", "Show this message and exit."))
    lines += ["", "Options:", *_table(rows)]
    if command.epilog:
        lines += ["", command.epilog]
    return "\n".join(lines)


def _hints(callback: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(callback)
    except (NameError, TypeError):
        return {}


def _arg_name(param: Any) -> str:
    if param.metavar:  # as declared, or as DealroomCommand names it
        return str(param.metavar)
    name = param.name.upper()
    return f"{name}..." if param.nargs == -1 else name


def _type_name(param: Any, hints: dict[str, Any]) -> str:
    hint = hints.get(param.name, str)
    origin = typing.get_origin(hint)
    if origin in (list, tuple):
        hint = typing.get_args(hint)[0]
    elif origin in (typing.Union, types.UnionType):
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if isinstance(hint, type) and hint.__name__ == "Path":
        return "PATH"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "|".join(str(m.value) for m in hint)
    return _TYPES.get(hint, getattr(hint, "__name__", "VALUE").upper())


def _option_names(param: Any, hints: dict[str, Any]) -> str:
    names = ", ".join(sorted(param.opts, key=len))
    if param.secondary_opts:
        return f"{names} / {', '.join(param.secondary_opts)}"
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return names
    kind = _type_name(param, hints)
    return f"{names} {kind}" if kind else names


def _describe(param: Any, required_note: bool = False) -> str:
    text = (param.help or "").strip()
    default = param.default.value if isinstance(param.default, enum.Enum) else param.default
    if param.required:
        return f"{text}  [required]" if required_note or text else "[required]"
    if getattr(param, "secondary_opts", None):  # --x/--no-x; None: neither, decided later
        if default is None:
            return text
        flag = param.opts[0] if default else param.secondary_opts[0]
        return f"{text}  [default: {flag.lstrip('-')}]"
    if default is not None and default is not False and default not in ((), []):
        shown = ", ".join(map(str, default)) if isinstance(default, list | tuple) else default
        return f"{text}  [default: {shown}]"
    return text


def _table(rows: list[tuple[str, str]]) -> list[str]:
    width = min(32, max(len(name) for name, _ in rows)) + 2
    out = []
    for name, text in rows:
        body = textwrap.wrap(text, WIDTH - 2 - width) or [""]
        if len(name) + 2 > width:
            out.append(f"  {name}")
            out += [" " * (2 + width) + line for line in body]
            continue
        out.append(f"  {name.ljust(width)}{body[0]}")
        out += [" " * (2 + width) + line for line in body[1:]]
    return out


if __name__ == "__main__":
    print(reference(), end="")
