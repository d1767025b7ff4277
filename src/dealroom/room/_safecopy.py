"""The one way a source file enters a room: ``ingest``, ``lab import`` and ``cuad import``.

::

    source ──realpath──► inside root? ──open (no link at the end)──► regular file? ──►
           ──copy, counting bytes, at most max_bytes──► dest   (sha256, size)

A file is read at its resolved path, and only if that path lies inside the source folder
(``root``): a link out of it (``x.txt -> /etc/shadow``) is refused, never followed, and so is
one swapped in after the walk. The last component is opened with ``O_NOFOLLOW`` and the
opened file must be a regular file (no device, pipe or socket); a size limit is checked on
the open file and again while copying (a file that grows is cut off and refused).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path
from typing import BinaryIO

from dealroom.room._walk import display_name, inside

_CHUNK = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
"""No link at the last component; a pipe opens without waiting for a writer (then refused)."""


class CopyRefused(Exception):
    """A source file that may not be copied; ``reason`` is an ingestion report reason."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def resolve_inside(source: str | Path, root: str | Path | None) -> str:
    """``source`` with every link resolved; :class:`CopyRefused` (``symlink_outside``) if it
    lies outside the folder ``root`` (``None``: no folder to stay in)."""
    real = os.path.realpath(source)
    if root is not None and not inside(real, root):
        target = display_name(real)
        raise CopyRefused("symlink_outside", f"resolves to {target!r}, outside the source "
                          "folder (never followed)")
    return real


def safe_copy(source: str | Path, root: str | Path | None, dest: str | Path,
              max_bytes: int | None = None) -> tuple[str, int]:
    """Copy the regular file ``source``, which must resolve inside ``root``, to ``dest``;
    return its sha256 and size. Raises :class:`CopyRefused` (``symlink_outside``,
    ``unreadable``, ``too_large``); nothing is left at ``dest`` then."""
    real = resolve_inside(source, root)
    try:
        fd = os.open(real, os.O_RDONLY | _NOFOLLOW)
    except OSError as exc:
        raise CopyRefused("unreadable", f"{type(exc).__name__}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as src:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CopyRefused("unreadable", "not a regular file (device, pipe or socket)")
        if max_bytes is not None and st.st_size > max_bytes:
            raise CopyRefused("too_large", f"{st.st_size:,} bytes is over the "
                              f"{max_bytes:,}-byte limit")
        digest, size = _copy_open(src, Path(dest), max_bytes)
    shutil.copystat(real, dest)
    return digest, size


def _copy_open(src: BinaryIO, dest: Path, max_bytes: int | None) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(dest, "wb") as dst:
            while chunk := src.read(_CHUNK):
                size += len(chunk)
                if max_bytes is not None and size > max_bytes:
                    raise CopyRefused("too_large", f"grew past the {max_bytes:,}-byte limit "
                                      "while being copied")
                digest.update(chunk)
                dst.write(chunk)
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    return digest.hexdigest(), size


def folder_inside(folder: Path, root: Path, what: str) -> None:
    """Refuse (:class:`~dealroom.errors.InputError`) a ``folder`` of a source that is a link,
    or resolves, out of ``root``: an import reads its source folder and nothing beside it."""
    from dealroom.errors import InputError

    if folder.is_symlink() or not inside(folder, root):
        raise InputError(f"{folder} is a symbolic link (to {display_name(os.path.realpath(folder))}"
                         f"): {what} must be a folder inside {root}, as an import never "
                         "follows a link out of its source")
