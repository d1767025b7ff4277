"""The one copy routine of ingest, lab import and cuad import: nothing read from outside."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from dealroom.errors import InputError
from dealroom.room._safecopy import CopyRefused, folder_inside, safe_copy


def _source(tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "src"
    src.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("CANARY-host")
    return src, secret


def test_a_file_inside_is_copied_with_its_hash(tmp_path):
    src, _ = _source(tmp_path)
    (src / "a.txt").write_text("contract")
    (src / "link.txt").symlink_to("a.txt")  # a link that stays inside is fine
    sha, size = safe_copy(src / "link.txt", src, tmp_path / "out" / "a.txt")
    assert (sha, size) == (hashlib.sha256(b"contract").hexdigest(), 8)
    assert (tmp_path / "out" / "a.txt").read_text() == "contract"


def test_a_link_out_of_the_root_is_refused(tmp_path):
    src, secret = _source(tmp_path)
    (src / "shadow.txt").symlink_to(secret)
    with pytest.raises(CopyRefused, match="outside the source folder") as info:
        safe_copy(src / "shadow.txt", src, tmp_path / "out.txt")
    assert info.value.reason == "symlink_outside" and not (tmp_path / "out.txt").exists()


def test_a_pipe_is_refused_without_waiting_for_a_writer(tmp_path):
    src, _ = _source(tmp_path)
    os.mkfifo(src / "pipe.txt")
    with pytest.raises(CopyRefused, match="not a regular file") as info:
        safe_copy(src / "pipe.txt", src, tmp_path / "out.txt")
    assert info.value.reason == "unreadable" and not (tmp_path / "out.txt").exists()


def test_the_size_limit_holds(tmp_path):
    src, _ = _source(tmp_path)
    (src / "big.txt").write_bytes(b"x" * 5000)
    with pytest.raises(CopyRefused, match="5,000 bytes is over the 4,096-byte limit") as info:
        safe_copy(src / "big.txt", src, tmp_path / "out.txt", max_bytes=4096)
    assert info.value.reason == "too_large" and not (tmp_path / "out.txt").exists()


def test_a_source_folder_linked_out_is_refused(tmp_path):
    src, secret = _source(tmp_path)
    (src / "docs").symlink_to(secret.parent)
    with pytest.raises(InputError, match="is a symbolic link"):
        folder_inside(src / "docs", src, "documents/")
    (src / "real").mkdir()
    folder_inside(src / "real", src, "documents/")
