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

import typer

from dealroom.errors import DealroomError, DealroomWarning, InputError

app = typer.Typer(
    name="dealroom",
    help="Run, judge, evaluate and post-train RLM agents on M&A data rooms.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


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
        exc.show()
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
