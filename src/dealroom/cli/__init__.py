"""The ``dealroom`` command line: a thin typer shell over the Python API.

Commands live in small modules by area (``_room``, ``_run``, ``_judge``); each parses flags,
calls one public function and renders the result with :mod:`dealroom.cli.display`.
Errors are rendered once here: a :class:`~dealroom.errors.DealroomError` prints one red line and
exits 1, Ctrl-C exits 130.
"""

from __future__ import annotations

import sys

import typer

from dealroom.errors import DealroomError

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

        print(f"dealroom {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Run, judge, evaluate and post-train RLM agents on M&A data rooms."""


from dealroom.cli import _doctor, _ingest, _judge, _room, _run, _train  # noqa: E402,F401  (registers commands)


def main() -> None:
    """Entry point of the ``dealroom`` script."""
    from dealroom.cli.display import err_console

    try:
        code = app(standalone_mode=False)  # returns typer.Exit's code in this mode
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]")
        sys.exit(130)
    except DealroomError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(1)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors: bad or missing flags
        exc.show()
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
