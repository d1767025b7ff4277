"""The worker sees the room's agent files and nothing else of the room (issue 37, item 5).

A room folder may hold a copy of its rubric or answer key under any name — a note hard-linked
to ``task.json``, a file planted in ``.index/``, an unlisted file in ``documents/`` linked to
``answer_key/findings.json``: none of them exists in the worker's view; the listed documents
and the index do, and the room works.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from sandbox_kit import FAST, machine, run

from dealroom.errors import RoomError
from dealroom.harness.sandbox import ProcessSandbox
from dealroom.room import agent_files, ensure_index

RUBRIC = "dealroom-room-view-rubric"
ANSWER = "dealroom-room-view-answer"
HOSTILE = {
    "notes/task_copy.json": "task.json",
    ".index/secret.json": "task.json",
    "documents/_ak.json": "answer_key/findings.json",
    "documents/deep/er/key.json": "answer_key/findings.json",
    "ocr/leak.txt": "answer_key/findings.json",
    "task.json.bak": "task.json",
}
"""A hard link planted in the room (not in room.json) -> the hidden file it shares."""


@pytest.fixture()
def room(small_room: Path, tmp_path: Path) -> Path:
    """The small room with a rubric, an answer key and a hard link to one of them at every
    :data:`HOSTILE` path, plus an unlisted symbolic link and an unlisted plain file."""
    dest = tmp_path / "room"
    shutil.copytree(small_room, dest)
    (dest / "task.json").write_text(json.dumps({"criteria": [RUBRIC]}))
    (dest / "answer_key").mkdir(exist_ok=True)
    (dest / "answer_key/findings.json").write_text(json.dumps({"findings": [ANSWER]}))
    for rel, target in HOSTILE.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        os.link(dest / target, dest / rel)
    os.symlink("../task.json", dest / "documents/_rubric.json")
    (dest / "documents/unlisted.txt").write_text(f"{RUBRIC} copied by hand")
    ensure_index(dest)
    return dest


PROBE = """
import json, os
room_dir = str(room.path)
read, missing = [], []
for rel in PATHS:
    try:
        read.append((rel, open(os.path.join(room_dir, rel)).read()))
    except OSError as exc:
        missing.append((rel, type(exc).__name__))
seen = []
for d, dirs, files in os.walk(room_dir):
    seen += [os.path.relpath(os.path.join(d, f), room_dir) for f in files]
leaked = [p for p in seen if MARKS[0] in open(os.path.join(room_dir, p), errors='replace').read()
          or MARKS[1] in open(os.path.join(room_dir, p), errors='replace').read()]
print(json.dumps({'read': read, 'missing': missing, 'seen': sorted(seen), 'leaked': leaked,
                  'hits': len(room.grep('agreement'))}))
"""


def test_no_unlisted_file_of_the_room_is_readable_whatever_its_links(room: Path) -> None:
    machine().needs("namespaces")
    paths = [*HOSTILE, "documents/_rubric.json", "documents/unlisted.txt", "task.json",
             "answer_key/findings.json"]
    code = f"PATHS = {paths!r}\nMARKS = {[RUBRIC, ANSWER]!r}\n" + PROBE

    async def go() -> dict:
        sb = ProcessSandbox(room, room.parent / "scratch", FAST)
        await sb.start()
        try:
            r = await sb.execute(code, timeout=600)
            assert r.error is None, r.error
            return json.loads(r.stdout.strip().splitlines()[-1])
        finally:
            await sb.close()

    seen = run(go())
    assert seen["read"] == [], seen["read"]
    assert {rel for rel, why in seen["missing"]} == set(paths)
    assert {why for rel, why in seen["missing"]} == {"FileNotFoundError"}
    assert seen["leaked"] == []
    expected = {f.path for f in agent_files(room)}
    assert set(seen["seen"]) == expected  # the listed documents, room.json and the index
    assert seen["hits"] > 0  # the room works


def test_agent_files_are_the_manifest_the_listed_documents_and_the_index(room: Path) -> None:
    files = agent_files(room)
    listed = [d["path"] for d in json.loads((room / "room.json").read_text())["documents"]]
    assert [f.path for f in files if f.path.startswith("documents/")] == listed
    assert {f.path for f in files} - set(listed) == {
        "room.json", *(f".index/{n}" for n in ("meta.json", "docs.json", "layout.bin",
                                               "text.bin", "lower.bin", "search.db",
                                               "tokens.bin", "lines.bin"))}
    for f in files:
        st = os.stat(f.real)
        assert (st.st_dev, st.st_ino) == f.inode and not os.path.islink(f.real)


@pytest.mark.parametrize("planted", [".index/text.bin", ".index/search.db"])
def test_an_agent_file_linked_to_the_rubric_is_refused(room: Path, planted: str) -> None:
    (room / planted).unlink()
    os.link(room / "task.json", room / planted)
    with pytest.raises(RoomError, match="hard link to the room's task.json"):
        agent_files(room)


def test_an_index_file_that_is_a_symlink_is_refused(room: Path) -> None:
    (room / ".index/docs.json").rename(room / "docs.json")
    os.symlink("../docs.json", room / ".index/docs.json")
    with pytest.raises(RoomError, match="symbolic link"):
        agent_files(room)


SHOW = """
import json, os, sys
from dealroom.errors import RoomError
from dealroom.harness.sandbox import _confine
from dealroom.harness.sandbox._view import ViewFile, show_room
room, new, files = sys.argv[1], sys.argv[2], [ViewFile(p, r, tuple(i)) for p, r, i in
                                              json.loads(sys.argv[3])]
_confine._unshare(_confine.CLONE_NEWNS)
_confine._mount(None, '/', None, _confine.MS_REC | _confine.MS_PRIVATE)
try:
    show_room(new, room, files, _confine._mount)
except RoomError as exc:
    print('refused:', exc)
else:
    print('shown:', sorted(os.listdir(new + room + '/documents')),
          open(new + room + '/' + files[0].path).read()[:40])
"""


def _show(room: Path, new: Path, files: list) -> str:
    import subprocess
    import sys

    new.mkdir()
    listed = json.dumps([[f.path, f.real, list(f.inode)] for f in files])
    done = subprocess.run([sys.executable, "-c", SHOW, str(room), str(new), listed],
                          capture_output=True, text=True, check=True)
    return done.stdout


def test_a_file_swapped_after_its_check_is_not_shown(room: Path, tmp_path: Path) -> None:
    """The view binds a file where the room lists it and checks what got bound: a file renamed
    over since the host's check (or replaced by a link to the rubric) is refused."""
    machine().needs("namespaces")
    docs = [f for f in agent_files(room) if f.path.startswith("documents/")]
    assert _show(room, tmp_path / "a", docs[:1]).startswith("shown: ")
    os.replace(docs[0].real, tmp_path / "old")
    os.link(room / "task.json", docs[0].real)  # the listed name now holds the rubric
    assert "changed while the sandbox started" in _show(room, tmp_path / "b", docs[:1])
    os.unlink(docs[0].real)
    os.symlink(room / "task.json", docs[0].real)
    assert "changed while the sandbox started" in _show(room, tmp_path / "c", docs[:1])


def test_a_room_that_cannot_be_shown_is_a_clear_error_not_a_weaker_sandbox(room: Path) -> None:
    machine().needs("namespaces")
    from dealroom.errors import SandboxError

    async def go() -> None:
        sb = ProcessSandbox(room, room.parent / "scratch", FAST)
        (room / ".index/lines.bin").unlink()  # after ensure_index: the worker finds it gone
        sb.scratch_dir.mkdir()  # what start() does, less rebuilding the index
        try:
            await sb._spawn("namespaces+uid" if os.geteuid() == 0 else "userns")
        finally:
            await sb.close()

    with pytest.raises(SandboxError, match="cannot show the room.*lines.bin"):
        run(go())
