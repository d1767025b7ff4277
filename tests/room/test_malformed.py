"""Ingesting a folder of about 150 malformed files: each is kept or reported, none leaks.

``python -m pytest tests/room/test_malformed.py -q -s`` prints the counts (tried, kept,
reported, leaked).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from malformed import HOST_MARKERS, write_malformed

from dealroom.room import (
    INGEST_REASONS,
    REASONS,
    IngestReport,
    IngestSettings,
    Room,
    ingest,
    validate_room,
)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> tuple[Path, list[str], IngestReport, float]:
    root = tmp_path_factory.mktemp("malformed")
    entries = write_malformed(root / "src", root / "host")
    started = time.monotonic()
    report = ingest(root / "src", root / "room", IngestSettings(workers=2, file_timeout=120))
    return root / "room", entries, report, time.monotonic() - started


def _leaks(room: Path) -> list[str]:
    return [f"{p.relative_to(room)}: {marker!r}" for p in room.rglob("*") if p.is_file()
            for marker in HOST_MARKERS if marker in p.read_bytes()]


def test_every_malformed_file_is_kept_or_reported_and_none_leaks(ingested):
    room, entries, report, seconds = ingested
    kept = {d.path.removeprefix("documents/") for d in report.manifest.documents}
    reasons: dict[str, set[str]] = {}
    for e in report.entries:
        reasons.setdefault(e.path, set()).add(e.reason)
    assert len(entries) >= 148
    assert [e for e in entries if e not in kept and e not in reasons] == []
    assert set().union(*reasons.values()) <= set(REASONS) | set(INGEST_REASONS)
    assert "timeout" not in set().union(*reasons.values())  # nothing stalls for its limit
    leaked = _leaks(room)
    assert leaked == []
    reported = [e for e in entries if e not in kept]
    print(f"\nmalformed files: {len(entries)} tried, {len(entries) - len(reported)} kept, "
          f"{len(reported)} reported, {len(leaked)} leaked; ingest {seconds:.1f} s")


def test_links_out_of_the_folder_are_each_reported(ingested):
    room, entries, report, _ = ingested
    links = [e for e in entries if (room.parent / "src" / e).is_symlink()]
    outside = {e.path for e in report.entries if e.reason == "symlink_outside"}
    assert sorted(outside) == sorted(links) and len(outside) == 7
    assert report.files == len(entries) - 7  # /etc and the outside folder were never walked


def test_pathological_files_get_the_expected_outcome(ingested):
    _, _, report, _ = ingested
    kept = {d.path.removeprefix("documents/") for d in report.manifest.documents}
    reason = {e.path: e.reason for e in report.entries if e.action == "skipped"}
    assert {"07 sheets/far-1.xlsx", "07 sheets/far-2000.xlsx",
            "07 sheets/lying-dimension.xlsx"} <= kept
    for ext in ("docx", "xlsx", "pptx"):
        assert reason[f"04 encrypted/office-encrypted.{ext}"] == "encrypted"
    assert reason["04 encrypted/user-password.pdf"] == "encrypted"
    assert reason["05 junk/random.eml"] == "corrupt"
    assert reason["05 junk/control.eml"] == "corrupt"
    assert reason["06 empty/zero.pdf"] == reason["06 empty/invisible.md"] == "empty"
    assert reason["02 bombs/zeros-part.docx"] == "corrupt"


def test_the_room_validates_and_opens(ingested):
    room = ingested[0]
    assert [str(p) for p in validate_room(room) if p.level == "error"] == []
    with Room.open(room) as opened:
        markers = "|".join(re.escape(m.decode()) for m in HOST_MARKERS)
        assert opened.grep(markers, flags=0).total == 0
