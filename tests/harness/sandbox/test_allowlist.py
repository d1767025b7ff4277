"""The worker sees an allow-list: the runtime, the room and its scratch, nothing beside them.

Rooms, run folders, a sweep and a LAB task lie side by side in a folder outside every path the
sandbox used to mask (``/srv``, ``/var/lib``, ...: where teams keep data); a hostile REPL tries
every way to reach them and reads none.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_kit import FAST, machine, run

import dealroom
from dealroom.harness.sandbox import ProcessSandbox
from dealroom.room import import_lab

MARK = "dealroom-allowlist-marker"
HANG_S = 1800
"""The probe's cell limit: only a hang reaches it (the probe reads a few small folders), so
the outcome never races a clock on a busy machine."""
PLACES = ("/srv", "/var/lib", "/opt", "/mnt", "/data", "/workspace")


def _data_folder() -> Path:
    for place in PLACES:
        if os.path.isdir(place) and os.access(place, os.W_OK):
            return Path(tempfile.mkdtemp(prefix="dealroom-allowlist-", dir=place))
    pytest.skip(f"none of {', '.join(PLACES)} is writable here")


def _lab_task(folder: Path, room: Path) -> Path:
    task = folder / "lab" / "falcon"
    shutil.copytree(room / "documents", task / "documents")
    (task / "task.json").write_text(json.dumps({
        "title": "Falcon", "instructions": "Review the room and write a memo.",
        "deliverables": {"memo": "memo.md"},
        "criteria": [{"id": "C-001", "title": "Fee", "deliverables": ["memo"],
                      "match_criteria": f"PASS if the memo names {MARK}-lab-rubric."}]}))
    return task


@pytest.fixture()
def data(small_room: Path) -> Iterator[dict[str, Path]]:
    """A data folder under /srv (or the like) with rooms, runs, a sweep and a LAB task."""
    base = _data_folder()
    try:
        rooms = base / "rooms"
        rooms.mkdir()
        for name in ("falcon", "heron"):
            shutil.copytree(small_room, rooms / name)
            (rooms / name / "answer_key").mkdir(exist_ok=True)
            (rooms / name / "answer_key/findings.json").write_text(
                json.dumps({"findings": [f"{MARK}-{name}-answer"]}))
            (rooms / name / "task.json").write_text(json.dumps({"criteria": [f"{MARK}-rubric"]}))
        run_dir = base / "runs" / "falcon-1"
        run_dir.mkdir(parents=True)
        (run_dir / "scores.json").write_text(json.dumps({"lacks": f"{MARK}-scores"}))
        (run_dir / "memo.md").write_text(f"{MARK}-gold-memo")
        sweep = base / "sweep"
        sweep.mkdir()
        (sweep / "sweep.json").write_text(json.dumps({"spec": {"secret": f"{MARK}-secret"}}))
        task = _lab_task(base, small_room)
        import_lab(task, rooms / "lab-falcon")
        scratch = base / "runs" / "falcon-2" / "scratch"
        scratch.mkdir(parents=True)
        (scratch.parent / "trajectory.jsonl").write_text(f"{MARK}-sibling-of-scratch")
        yield {"base": base, "room": rooms / "falcon", "lab": rooms / "lab-falcon",
               "task": task, "scratch": scratch}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _secrets(base: Path) -> list[str]:
    """Every file of the data folder holding a marker, by absolute path."""
    return [str(p) for p in base.rglob("*")
            if p.is_file() and MARK.encode() in p.read_bytes()]


PROBE = """
import os, json, glob, sys
found, errors = [], []
RUNTIME = ('/proc', '/dev', '/usr', '/sys', sys.prefix, sys.base_prefix)
def look(path):
    if not path.startswith('/proc/') and os.path.realpath(path).startswith(RUNTIME):
        return  # the runtime (/bin is /usr/bin): gigabytes to read, and no secret lies there
    try:
        if os.path.isdir(path):
            for d, dirs, files in os.walk(path):
                dirs[:] = [x for x in dirs if not os.path.join(d, x).startswith(RUNTIME)]
                for f in files:
                    look(os.path.join(d, f))
            return
        data = open(path, 'rb').read()
        if MARK.encode() in data:
            found.append(path)
    except OSError as exc:
        errors.append(type(exc).__name__)
for path in PATHS:
    look(path)
look(str(room.path) + '/..')
look(str(room.path) + '/../..')
look(os.path.dirname(os.getcwd()))
look('/proc/self/cwd/..')
look('/proc/self/cwd/../..')
look('/proc/1/cwd/../..')
look('/proc/self/root' + BASE)
look('/proc/1/root' + BASE)
for fd in os.listdir('/proc/self/fd'):
    try:
        target = os.readlink('/proc/self/fd/' + fd)
    except OSError:
        continue
    look('/proc/self/fd/' + fd)
    if target.startswith('/'):
        look(target)
for top in glob.glob('/*'):
    if not top.startswith(RUNTIME):
        look(top)
try:
    task_dir = json.load(open(room.path / 'room.json'))['meta']['lab']['task_dir']
    look(task_dir)
    look(task_dir + '/task.json')
except (KeyError, OSError) as exc:
    errors.append(repr(exc))
print(json.dumps({'found': found, 'listing': sorted(os.listdir('/'))}))
"""


@pytest.mark.parametrize("which", ["room", "lab"])
def test_the_repl_reads_nothing_beside_its_room(data: dict[str, Path], which: str) -> None:
    machine().needs("namespaces")
    secrets = _secrets(data["base"])
    assert len(secrets) >= 8, secrets  # answer keys, rubrics, scores, memo, sweep, LAB task
    paths = [*secrets, str(data["base"]), str(data["base"] / "rooms"), str(data["task"])]
    code = (f"MARK = {MARK!r}\nBASE = {str(data['base'])!r}\nPATHS = {paths!r}\n" + PROBE)

    async def go() -> dict:
        sb = ProcessSandbox(data[which], data["scratch"], FAST)
        await sb.start()
        try:
            r = await sb.execute(code, timeout=HANG_S)
            assert r.error is None, r.error
            seen = json.loads(r.stdout.strip().splitlines()[-1])
            r = await sb.execute("len(room.grep('agreement')) > 0")  # the room itself: readable
            assert r.stdout == "True\n", r
            return seen
        finally:
            await sb.close()

    seen = run(go())
    assert seen["found"] == [], seen
    runtime = [sys.prefix, sys.base_prefix, sys.executable, os.path.realpath(sys.executable),
               dealroom.__file__, *[p for p in sys.path if p.startswith("/")]]
    tops = {Path(p).parts[1] for p in [*runtime, str(data["base"])] if len(Path(p).parts) > 1}
    system = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "proc", "dev"}
    assert set(seen["listing"]) <= tops | system, seen["listing"]


def test_the_filesystem_part_says_what_the_worker_sees(small_room: Path, tmp_path: Path) -> None:
    machine().needs("namespaces")

    async def go() -> tuple[dict[str, str], str]:
        sb = ProcessSandbox(small_room, tmp_path / "scratch", FAST)
        await sb.start()
        try:
            r = await sb.execute("import os\nprint(sorted(os.listdir('/')))")
            return sb.confinement, r.stdout
        finally:
            await sb.close()

    confinement, listing = run(go())
    assert confinement["filesystem"].startswith("allow-list:"), confinement
    assert confinement["filesystem"].endswith("(pivot_root)"), confinement
    for absent in ("'srv'", "'home'", "'run'", "'var'", "'opt'", "'mnt'", "'sys'"):
        assert absent not in listing, listing


def test_the_plan_binds_each_real_path_once_and_keeps_the_links_on_the_way(tmp_path: Path) -> None:
    from dealroom.harness.sandbox._view import plan

    real = tmp_path / "opt" / "python"
    (real / "lib").mkdir(parents=True)
    (real / "bin").mkdir()
    (real / "bin" / "python").write_text("")
    (tmp_path / "current").symlink_to("opt/python")  # like /lib64 -> usr/lib64, a venv's link
    scratch = tmp_path / "runs" / "r1" / "scratch"
    scratch.mkdir(parents=True)
    paths = [str(tmp_path / "current" / "bin" / "python"), str(real), str(real / "lib"),
             str(tmp_path / "missing"), "/", str(tmp_path / "runs"), "relative/path"]
    made = plan(paths, str(scratch))
    try:
        assert made.binds == {str(real): True}  # once: the folder holds the other two
        assert made.links == {str(tmp_path / "current"): "opt/python"}
        assert set(made.fds) == {str(real)}
    finally:
        made.close()
    assert made.fds == {}
