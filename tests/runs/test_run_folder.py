"""The run folder: created once, opened with a plain answer when it holds no run, read back."""

import json
import subprocess
import sys

import pytest

from dealroom.errors import ConfigError
from dealroom.measure import run_metrics
from dealroom.runs import RUN_VERSION, RunFolder, RunRecorder, find_runs


def write(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_create_writes_the_config_with_its_version_and_an_output_folder(tmp_path):
    folder = RunFolder.create(tmp_path / "run", {"harness": "rlm", "room": "r"})
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config == {"version": RUN_VERSION, "harness": "rlm", "room": "r"}
    assert (tmp_path / "run" / "output").is_dir() and folder.name == "run"


@pytest.mark.parametrize("leftovers", [
    ["output/"],
    ["output/", ".config.json.abc123.tmp"],
    [".config.json.x.tmp"],
    [],
])
def test_a_folder_killed_before_its_config_is_reused_and_resume_says_so(tmp_path, leftovers):
    run = tmp_path / "run"
    run.mkdir()
    for name in leftovers:
        (run / name).mkdir() if name.endswith("/") else write(run / name, '{"vers')
    with pytest.raises(ConfigError, match=r"holds no run: it was stopped before it wrote "
                       r"config.json\. Start it again with `dealroom run ROOM --out .*run` "
                       r"\(the folder is reused\)"):
        RunFolder.open(run)
    RunFolder.check_new(run)
    RunFolder.create(run, {"room": "r"})
    assert sorted(p.name for p in run.iterdir()) == ["config.json", "output"]


@pytest.mark.parametrize("what", ["output/memo.md", "notes.txt", "trajectory.jsonl"])
def test_anything_else_makes_a_folder_used(tmp_path, what):
    run = tmp_path / "run"
    write(run / what, "x")
    with pytest.raises(ConfigError, match="already holds files and no run: choose a new --out"):
        RunFolder.create(run, {})
    with pytest.raises(ConfigError, match="is not a run folder: config.json is missing"):
        RunFolder.open(run)
    assert (run / what).read_text() == "x"


def test_a_run_is_never_overwritten(tmp_path):
    RunFolder.create(tmp_path / "run", {"room": "r"})
    with pytest.raises(ConfigError, match=r"already holds files: choose a new --out folder, or "
                       r"continue that run with `dealroom resume .*run`"):
        RunFolder.check_new(tmp_path / "run")


def test_out_that_cannot_be_a_folder_is_a_config_error(tmp_path):
    file = write(tmp_path / "file", "keep")
    with pytest.raises(ConfigError, match="is a file: give --out a new folder"):
        RunFolder.create(file, {})
    with pytest.raises(ConfigError, match="cannot create the run folder"):
        RunFolder.create(file / "below", {})
    with pytest.raises(ConfigError, match="cannot create the run folder /proc/x"):
        RunFolder.create("/proc/x", {})
    assert file.read_text() == "keep"


def test_open_says_what_is_wrong(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        RunFolder.open(tmp_path / "nope")
    with pytest.raises(ConfigError, match="is a file, not a run folder"):
        RunFolder.open(write(tmp_path / "f"))
    write(tmp_path / "bad" / "config.json", "{not json")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        RunFolder.open(tmp_path / "bad").config  # noqa: B018
    write(tmp_path / "new" / "config.json", json.dumps({"version": RUN_VERSION + 1}))
    with pytest.raises(ConfigError, match="upgrade dealroom"):
        RunFolder.open(tmp_path / "new")


def test_a_version_1_folder_without_a_version_key_opens(tmp_path):
    write(tmp_path / "old" / "config.json", json.dumps({"room": "r", "harness": "rlm"}))
    assert RunFolder.open(tmp_path / "old").version == RUN_VERSION  # read as the current one


def test_events_come_back_in_seq_order_and_the_end_is_the_roots(tmp_path):
    run = tmp_path / "run"
    folder = RunFolder.create(run, {})
    lines = [{"seq": 2, "type": "run_end", "agent": "root/c1-0"}, {"seq": 0, "type": "run_start"},
             {"seq": 1, "type": "cell"}]
    write(run / "trajectory.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    events = folder.events()
    assert [e["seq"] for e in events] == [0, 1, 2]
    assert not RunFolder.ended(events)
    assert RunFolder.ended([*events, {"type": "run_end", "agent": "root"}])


def test_deliverables_metrics_and_scores(tmp_path):
    folder = RunFolder.create(tmp_path / "run", {})
    assert folder.read_deliverable("memo.md") is None and folder.metrics() is None
    assert folder.scores() is None and folder.scores("reference") is None
    folder.write_deliverable("memo.md", "# M\n")
    metrics = run_metrics({}, [], run="run")
    folder.write_metrics(metrics)
    write(folder.scores_path("reference"), json.dumps({"pass_rate": 0.5}))
    assert folder.memo_path.read_text() == folder.read_deliverable("memo.md") == "# M\n"
    assert json.dumps(folder.metrics()) == json.dumps(metrics)  # NaN root shares
    assert metrics["status"] == "not_started"
    assert folder.scores("reference") == {"pass_rate": 0.5, "version": 2,  # migrated from 1
                                          "headline": 0.5, "headline_kind": "total"}
    assert folder.scores_path().name == "scores.json"
    assert [p.name for p in folder.memo_path.parent.iterdir()] == ["memo.md"]  # no temp left


def test_the_room_is_found_as_given_or_beside_the_run(tmp_path):
    room = write(tmp_path / "rooms" / "r" / "room.json", "{}").parent
    absolute = RunFolder.create(tmp_path / "a", {"room": str(room)})
    relative = RunFolder.create(tmp_path / "rooms" / "run", {"room": "../r"})
    assert absolute.room == room and relative.room.resolve() == room.resolve()
    with pytest.raises(ConfigError, match=r"the room of run .* \(gone\) is not found"):
        RunFolder.create(tmp_path / "c", {"room": "gone"}).room  # noqa: B018
    with pytest.raises(ConfigError, match="names no room"):
        RunFolder.create(tmp_path / "d", {}).room  # noqa: B018


def test_find_runs_expands_folders_of_runs_and_sweeps(tmp_path):
    def run(path):
        RunRecorder(RunFolder.create(path, {})).close()
        return path

    a, b = run(tmp_path / "runs" / "a"), run(tmp_path / "runs" / "b")
    write(tmp_path / "runs" / "not-a-run" / "x.txt")
    s1 = run(tmp_path / "sweep" / "episodes" / "room1" / "k0")
    s2 = run(tmp_path / "sweep" / "episodes" / "room1" / "k1")
    s3 = run(tmp_path / "sweep" / "episodes" / "room2")
    nested = run(tmp_path / "runs" / "old-sweep" / "episodes" / "e0")
    deep = run(tmp_path / "runs" / "x" / "y" / "sweep" / "episodes" / "e0")
    run(tmp_path / "runs" / ".trash" / "old")
    assert find_runs([a]) == [a]
    assert find_runs([tmp_path / "runs"]) == [a, b, nested, deep]
    assert find_runs([tmp_path / "sweep"]) == [s1, s2, s3]
    assert find_runs([a, tmp_path / "runs", b]) == [a, b, nested, deep]  # each once, in order
    with pytest.raises(ConfigError, match="is not a run folder"):
        find_runs([tmp_path / "nope"])
    with pytest.raises(ConfigError, match="no run folders found"):
        find_runs([tmp_path / "runs" / "not-a-run"])


def test_find_runs_searches_each_folder_once_and_skips_one_it_cannot_list(tmp_path,
                                                                          monkeypatch):
    import os
    from pathlib import Path

    from dealroom.errors import DealroomWarning

    runs = tmp_path / "runs"
    a = runs / "a"
    RunRecorder(RunFolder.create(a, {})).close()
    os.symlink(runs, runs / "up")  # runs/up/a, runs/up/up/a, ...: the same run each time
    os.symlink(a, runs / "z_alias")
    os.symlink("loop", runs / "loop")
    assert find_runs([runs]) == [a]
    closed = runs / "closed"
    closed.mkdir()
    listing = Path.iterdir

    def iterdir(self):
        if self == closed:
            raise PermissionError(13, "Permission denied", str(self))
        return listing(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    with pytest.warns(DealroomWarning, match="cannot search .*closed .Permission denied.: "
                                             "the runs in it are left out"):
        assert find_runs([runs]) == [a]


def test_importing_runs_imports_no_other_part_of_dealroom():
    code = ("import sys, dealroom.runs; print(sorted({m.split('.')[1] for m in sys.modules "
            "if m.startswith('dealroom.')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['_util', 'errors', 'runs']"
