"""The ``dealroom`` command line: a thin typer shell over the Python API.

Commands live in small modules by area (``_room``, ``_ingest``, ``_run``, ``_judge``; ``_repl``
is the REPL's terminal loop); each parses flags, calls public functions of the API and renders
the result with the ``display*`` modules, where all rendering lives. Errors are rendered once
here: a :class:`~dealroom.errors.DealroomError` prints one red line (its text as written, never
read as markup) and exits 1 (2 for an :class:`~dealroom.errors.InputError`, as for a usage
error), Ctrl-C exits 130; a :class:`~dealroom.errors.DealroomWarning`
prints one yellow line and the command goes on.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from dealroom.cli._help import DealroomGroup
from dealroom.errors import DealroomError, DealroomWarning, InputError

WORKFLOW: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Rooms", ("generate", "ingest", "cuad", "lab", "inspect", "validate", "repl")),
    ("Run", ("run", "resume", "ask")),
    ("Judge and view", ("judge", "summary", "view")),
    ("Evaluate", ("eval", "report")),
    ("Train", ("export", "train", "budgetmix")),
    ("Demo and checks", ("demo", "doctor")),
)
"""``dealroom --help``'s panels, in the order of the work: make or bring a room, run, judge and
look, evaluate, train."""


class _WorkflowGroup(DealroomGroup):
    """Lists the commands in :data:`WORKFLOW`'s order rather than their registration's."""

    def list_commands(self, ctx: Any) -> list[str]:  # typer's own click Context
        order = [name for _, names in WORKFLOW for name in names]
        rank = {name: i for i, name in enumerate(order)}
        return sorted(super().list_commands(ctx), key=lambda n: rank.get(n, len(rank)))


app = typer.Typer(
    name="dealroom",
    cls=_WorkflowGroup,
    help="Run, judge, evaluate and post-train RLM agents on M&A data rooms.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def read_models_file(path: Path | None) -> Path | None:
    """The ``--models`` callback: a file given is read and checked whether or not a model of
    it is used, so a bad one is an InputError (exit 2), never accepted unread."""
    if path is not None:
        from dealroom.errors import ConfigError
        from dealroom.models import load_models_file

        try:
            load_models_file(path)
        except InputError:
            raise
        except ConfigError as exc:  # its message names the file
            raise InputError(str(exc)) from None
    return path


def _show_version(value: bool) -> None:
    if value:
        from dealroom import __version__
        from dealroom.cli.display import render_version

        render_version(__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Run, judge, evaluate and post-train RLM agents on M&A data rooms."""


eval_app = typer.Typer(name="eval", no_args_is_help=True,
                       help="Evaluate policies: sweeps, Pass@(K,T), comparisons, analyses, error "
                            "prefixes and recovery, BudgetMix plans.")
app.add_typer(eval_app, name="eval")

from dealroom.cli import (  # noqa: E402,F401  (registers commands)
    _ask,
    _budgetmix,
    _doctor,
    _eval,
    _export,
    _ingest,
    _judge,
    _prefixes,
    _report,
    _room,
    _run,
    _train,
)


def _arrange() -> None:
    """Put every command in its :data:`WORKFLOW` panel, with a one-paragraph summary."""
    panel = {name: title for title, names in WORKFLOW for name in names}
    for command in app.registered_commands:
        assert command.callback is not None
        name = command.name or command.callback.__name__.replace("_", "-")
        command.rich_help_panel = panel.get(name, "More")
        doc = command.help or command.callback.__doc__ or ""
        command.short_help = command.short_help or " ".join(doc.split("\n\n")[0].split())
        _document(command, name)
    for group in app.registered_groups:
        named = group.name if isinstance(group.name, str) else None
        if named is None and group.typer_instance is not None:
            named = str(group.typer_instance.info.name)
        group.rich_help_panel = panel.get(str(named), "More")
        if getattr(group.cls, "value", group.cls) in (None, TyperGroup):  # typer's default
            group.cls = DealroomGroup
        for sub in group.typer_instance.registered_commands if group.typer_instance else ():
            assert sub.callback is not None
            _document(sub, f"{named} {sub.name or sub.callback.__name__.replace('_', '-')}")


def _document(command: Any, path: str) -> None:
    """Help as the docs write it (:class:`DealroomCommand`) with the command's examples."""
    from dealroom.cli._help import DealroomCommand, epilog

    if command.cls in (None, TyperCommand):  # typer's default: not a chosen class
        command.cls = DealroomCommand
    command.epilog = command.epilog or epilog(path)


_arrange()


def main() -> None:
    """Entry point of the ``dealroom`` script."""
    from dealroom.cli.display import render_error, render_interrupted, render_warning

    shown = warnings.showwarning

    def show(message, category, *args, **kwargs):  # type: ignore[no-untyped-def]
        if issubclass(category, DealroomWarning):
            render_warning(message)
        else:
            shown(message, category, *args, **kwargs)

    warnings.showwarning = show
    try:
        code = app(standalone_mode=False)  # returns typer.Exit's code in this mode
    except KeyboardInterrupt:
        render_interrupted()
        sys.exit(130)
    except DealroomError as exc:
        render_error(exc)
        sys.exit(2 if isinstance(exc, InputError) else 1)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors: bad or missing flags
        exc.show()  # type: ignore[attr-defined]  # click's ClickException
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
