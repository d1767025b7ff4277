"""``dealroom ARGS`` run in this process: the script's own entry point (``dealroom.cli.main``,
with its error rendering and exit codes) without the second or two a fresh Python spends
importing. Tests that need a real process (killing it, its imports) start one."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import warnings


def dealroom(*args: object) -> subprocess.CompletedProcess[str]:
    """What ``python -m dealroom ARGS`` prints and exits with, as a CompletedProcess."""
    from dealroom.cli import main

    argv = ["dealroom", *map(str, args)]
    out, err = io.StringIO(), io.StringIO()
    saved, code = sys.argv, 0
    # a fresh process's warning filters (each warning shown again), and main()'s warning
    # display undone after
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning,
                         ResourceWarning):
            warnings.simplefilter("ignore", category)
        try:
            sys.argv = argv
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    main()
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        finally:
            sys.argv = saved
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
