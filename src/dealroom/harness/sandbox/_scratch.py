"""Temporary folders for sandboxes' scratch dirs that outlive no process for long.

A run makes ``/tmp/dealroom-<kind>-<pid>-<random>/`` and deletes it when it ends. A run killed
with SIGKILL cannot, so every new one first deletes the folders of its kind whose pid is no
longer alive. (Inside the sandbox each scratch dir is a tmpfs of its own: the folders on the
host stay empty mount points.)
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path


def make_scratch(kind: str) -> Path:
    """A new ``dealroom-<kind>-<pid>-*`` folder in the temp dir, stale ones removed first."""
    remove_stale(kind)
    return Path(tempfile.mkdtemp(prefix=f"dealroom-{kind}-{os.getpid()}-"))


def remove_stale(kind: str) -> list[Path]:
    """Delete the ``dealroom-<kind>-<pid>-*`` folders of processes that are gone; which."""
    pattern = re.compile(rf"dealroom-{re.escape(kind)}-(\d+)-")
    removed = []
    for path in Path(tempfile.gettempdir()).glob(f"dealroom-{kind}-*"):
        match = pattern.match(path.name)
        if match and path.is_dir() and not path.is_symlink() and not alive(int(match[1])):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (someone else's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True
