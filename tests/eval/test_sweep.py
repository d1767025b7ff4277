"""Sweeps: the spec checked on load, episodes run and judged as they finish, failures recorded,
a SIGKILLed sweep resumed with no episode lost or run twice, Ray giving the pool's results."""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dealroom.errors import ConfigError
from dealroom.eval import load_spec, run_sweep
from dealroom.eval._spec import with_seed
from dealroom.runs import RunFolder


def write_spec(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def spec_text(room: Path, **keys) -> str:
    lines = [f'rooms = ["{room}"]']
    lines += [f"{k} = {json.dumps(v)}" for k, v in keys.items()]
    return "\n".join(lines) + "\n"


def sweep_cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "dealroom", "eval", "sweep", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def entries(out: Path) -> dict[str, dict]:
    return {e["id"]: e for e in json.loads((out / "sweep.json").read_text())["episodes"]}


# -- the spec ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    ('rooms = ["{room}"]\nroot = ["scripted"]\n', "unknown key 'root'"),
    ('rooms = ["{room}/nope"]\n', "is not a room"),
    ('rooms = ["{room}-*"]\n', "matches no room"),
    ('rooms = ["{room}"]\nmax_turns = [0]\n', "at least 1"),
    ('rooms = ["{room}"]\nsamples = 3\nseeds = [1, 2]\n', "seeds has 2 values"),
    ('rooms = ["{room}"]\nsamples = "3"\n', "samples must be an integer, got '3'"),
    ('[[generate]]\ndocs = 20\n', "missing required key 'secret': the same secret gives"),
    ('[[generate]]\ndocs = 20\nsecret = "s"\npages = 3\n', "unknown key 'pages'"),
    ('rooms = ["{room}"]\nroots = ["scripted:speed=2"]\n', "no option speed"),
    ('rooms = ["{room}"]\n[settings]\nmax_turns = 3\n', "at the top level"),
    ('rooms = ["{room}"]\n[settings]\nwarp = 3\n', "warp does not apply"),
])
def test_bad_specs_are_one_clear_error(tmp_path, generated_room, text, message):
    spec = write_spec(tmp_path / "spec.toml", text.format(room=generated_room))
    with pytest.raises(ConfigError, match=re.escape(message)):
        run_sweep(spec, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_oracle_is_refused_on_a_room_without_an_answer_key(tmp_path, small_room):
    spec = write_spec(tmp_path / "spec.toml", spec_text(small_room, subs=["oracle"]))
    with pytest.raises(ConfigError, match="oracle cannot run on room falcon.*no answer key"):
        run_sweep(spec, tmp_path / "out")


def test_a_judge_that_cannot_score_a_room_is_refused(tmp_path, small_room):
    spec = write_spec(tmp_path / "spec.toml", spec_text(small_room, subs=["local"]))
    with pytest.raises(ConfigError, match="judge: the rubric of falcon has no expect blocks"):
        run_sweep(spec, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_samples_seed_the_policies_and_a_hidden_budget_runs_only_the_largest_t(tmp_path,
                                                                               generated_room):
    spec = load_spec(write_spec(tmp_path / "s.toml", spec_text(
        generated_room, max_turns=[4, 16], samples=2, budget_visible=False)))
    assert spec.run_turns() == [16] and spec.seed_list() == [0, 1]
    assert with_seed("scripted:coverage=0.3", 2) == "scripted:coverage=0.3,seed=2"
    assert with_seed("oracle:seed=3", 1) == "oracle:seed=4"
    assert with_seed("m@http://h:1/v1", 1) == "m@http://h:1/v1"


# -- running ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory, generated_room):
    """Two policies x T {3, 8} x 2 samples on the generated room, with the process pool."""
    tmp = tmp_path_factory.mktemp("sweep")
    spec = write_spec(tmp / "spec.toml", spec_text(
        generated_room, roots=["scripted", "scripted:coverage=0.3"], subs=["oracle"],
        max_turns=[3, 8], samples=2))
    seen = []
    result = run_sweep(spec, tmp / "out", workers=2, progress=lambda s: seen.append(
        (s.done, s.failed, s.running)))
    return spec, tmp / "out", result, seen


def test_every_episode_is_a_judged_run_folder(small_sweep):
    spec, out, result, seen = small_sweep
    assert (result.episodes, result.done, result.failed, result.skipped) == (8, 8, 0, 0)
    index = entries(out)
    for entry in index.values():
        folder = RunFolder.open(out / "episodes" / entry["id"])
        assert folder.config["root"] == entry["root_spec"]
        assert folder.config["settings"]["max_turns"] == entry["max_turns"]
        assert folder.scores()["pass_rate"] == entry["pass_rate"]
        assert (folder.scores_by_turn() is not None) == (entry["max_turns"] == 8)
        assert entry["models"] == folder.config["models"]  # which model ran, in the index too
        assert entry["models"]["sub"]["kind"] == "oracle"
    assert index["g20/scripted_coverage=0.3__oracle/d1-T8-s1"]["root_spec"] == \
        "scripted:coverage=0.3,seed=1"
    assert seen[-1] == (8, 0, 0) and seen[0][0] == 0
    record = json.loads((out / "sweep.json").read_text())
    assert record["spec"]["samples"] == 2 and record["counts"] == {"done": 8}


def test_the_sweep_time_includes_generating_its_rooms(tmp_path, monkeypatch):
    """A clock that jumps 1000 s while a room is generated: the sweep's time holds the jump."""
    import types

    import dealroom.room
    from dealroom.eval import _sweep

    jump = [0.0]
    clock = types.SimpleNamespace(monotonic=lambda: time.monotonic() + jump[0])
    real = dealroom.room.generate_room

    def slow(*args, **kwargs):
        jump[0] += 1000.0
        return real(*args, **kwargs)

    monkeypatch.setattr(_sweep, "time", clock)
    monkeypatch.setattr(dealroom.room, "generate_room", slow)
    spec = write_spec(tmp_path / "spec.toml", 'roots = ["scripted"]\nsubs = ["oracle"]\n'
                      'max_turns = [2]\n[[generate]]\ndocs = 8\nsecret = "s"\n')
    result = run_sweep(spec, tmp_path / "out", workers=1)
    assert result.done == 1 and jump[0] == 1000.0
    assert result.seconds >= 1000.0


def test_running_it_again_skips_what_is_done_and_another_spec_is_refused(small_sweep, tmp_path):
    spec, out, _, _ = small_sweep
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    again = run_sweep(spec, out, workers=2)
    assert (again.skipped, again.done) == (8, 8)
    other = write_spec(tmp_path / "other.toml", spec.read_text().replace("samples = 2",
                                                                         "samples = 3"))
    with pytest.raises(ConfigError, match="sweep of another spec .*differs in samples"):
        run_sweep(other, out)
    after = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    assert {p: t for p, t in after.items() if p.name != "sweep.json"} == \
        {p: t for p, t in before.items() if p.name != "sweep.json"}


def test_a_failing_episode_is_recorded_and_the_sweep_goes_on(tmp_path, generated_room):
    spec = write_spec(tmp_path / "spec.toml", spec_text(
        generated_room, roots=["scripted", "dead@http://127.0.0.1:9/v1"], subs=["oracle"],
        max_turns=[3]))
    result = run_sweep(spec, tmp_path / "out", workers=2)
    assert (result.done, result.failed) == (1, 1)
    failed = [e for e in entries(tmp_path / "out").values() if e["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["root"].startswith("dead@")
    assert "127.0.0.1:9" in failed[0]["error"]
    again = run_sweep(spec, tmp_path / "out")  # not retried unless asked
    assert (again.failed, again.skipped) == (1, 1)


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _mid_episode(run: Path) -> bool:
    """The run has begun (events recorded) and not ended."""
    events = RunFolder(run).events()
    return bool(events) and not RunFolder.ended(events)


def _digest(path: Path) -> str:
    return hashlib.sha256((path / "trajectory.jsonl").read_bytes()).hexdigest()


def test_a_sigkilled_sweep_resumes_with_no_episode_lost_or_run_twice(tmp_path, generated_room):
    from dealroom.testing import MockOpenAIServer

    with MockOpenAIServer(lambda req: "ISSUE: none | SEVERITY: low", latency=0.3) as srv:
        _kill_and_resume(tmp_path, generated_room, f"mock@{srv.base_url}")


def _kill_and_resume(tmp_path: Path, room: Path, sub: str) -> None:
    """A sweep SIGKILLed while episodes are mid-way, then resumed. The sub-agent answers after
    0.3 s, so an episode lasts several waves and the kill lands inside one."""
    spec = write_spec(tmp_path / "spec.toml", spec_text(
        room, roots=["scripted", "scripted:coverage=0.5", "scripted:memo=end"],
        subs=[sub], max_turns=[30], samples=2))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "dealroom", "eval", "sweep", str(spec),
                             "--out", str(out), "--workers", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    done, running, workers = [], [], []
    while time.monotonic() < deadline and not (done and running):
        time.sleep(0.02)
        try:  # the sweep makes and removes folders as the scan walks them
            runs = [p.parent for p in (out / "episodes").rglob("config.json")] \
                if (out / "episodes").is_dir() else []
        except FileNotFoundError:
            continue
        if runs and not workers:
            workers = _children(proc.pid)  # the pool is up once episodes appear
        done = [r for r in runs if (r / "scores.json").is_file()]
        running = [r for r in runs if r not in done and _mid_episode(r)]  # started, not ended
    os.kill(proc.pid, signal.SIGKILL)  # at once: a running episode is cut mid-way
    assert done and running, proc.stderr.read().decode() if proc.poll() is not None else ""
    proc.wait()
    gone = time.monotonic() + 10
    while time.monotonic() < gone and any(Path(f"/proc/{w}").exists() for w in workers):
        time.sleep(0.05)
    assert not any(Path(f"/proc/{w}").exists() for w in workers), "workers outlived the sweep"
    finished = {r: _digest(r) for r in done}
    interrupted = [r for r in running if _mid_episode(r)]  # still unfinished at the kill
    assert interrupted
    result = sweep_cli(spec, "--out", out, "--workers", "2")
    assert result.returncode == 0, result.stderr
    index = entries(out)
    assert len(index) == 6 and {e["status"] for e in index.values()} == {"done"}
    for run, digest in finished.items():
        assert _digest(run) == digest, f"{run} was run again"
    for entry in index.values():
        events = RunFolder.open(out / "episodes" / entry["id"]).events()
        assert sum(e["type"] == "run_start" for e in events) == 1
        assert sum(e["type"] == "run_end" and e["agent"] == "root" for e in events) == 1
        calls = [e["call_id"] for e in events if e["type"] == "model_call"]
        assert len(calls) == len(set(calls)), f"{entry['id']}: a model call was repeated"
    assert all(any(e["type"] == "resumed" for e in RunFolder.open(r).events())
               for r in interrupted)
    resumed = {i for i, e in index.items() if e["resumed"]}  # sweep.json records them
    assert {str(r.relative_to(out / "episodes")) for r in interrupted} <= resumed
    for i in index:
        events = RunFolder.open(out / "episodes" / i).events()
        assert (i in resumed) == any(e["type"] == "resumed" for e in events)


@pytest.mark.slow
def test_ray_runs_the_same_episodes_with_the_same_results(small_sweep, tmp_path):
    pytest.importorskip("ray")
    spec, out, _, _ = small_sweep
    result = run_sweep(spec, tmp_path / "ray", workers=2, backend="ray")
    assert (result.done, result.failed, result.backend) == (8, 0, "ray")
    pool, ray = entries(out), entries(tmp_path / "ray")
    assert pool.keys() == ray.keys()
    for key, entry in pool.items():
        assert (ray[key]["pass_rate"], ray[key]["run_status"]) == \
            (entry["pass_rate"], entry["run_status"]), key
        memo = RunFolder(out / "episodes" / key).memo_path.read_text()
        assert RunFolder(tmp_path / "ray" / "episodes" / key).memo_path.read_text() == memo


def test_ray_missing_is_one_line_with_the_install(monkeypatch, small_sweep, tmp_path):
    import builtins

    real = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray":
            raise ImportError("no ray")
        return real(name, *args, **kwargs)

    spec, out, _, _ = small_sweep
    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ConfigError, match=re.escape('pip install "dealroom[ray]"')):
        run_sweep(spec, tmp_path / "x", backend="ray")
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_the_embedded_local_model_runs_in_a_sweep(tmp_path):
    pytest.importorskip("llama_cpp")
    fixture = Path(__file__).parents[1] / "judge" / "fixtures" / "room"  # 8 short documents
    room = shutil.copytree(fixture, tmp_path / "room")
    spec = write_spec(tmp_path / "spec.toml", spec_text(room, subs=["local"], max_turns=[6]))
    result = run_sweep(spec, tmp_path / "out", workers=1)
    index = entries(tmp_path / "out")
    assert (result.done, result.failed) == (1, 0), index
    folder = RunFolder.open(tmp_path / "out" / "episodes" / next(iter(index)))
    assert folder.config["sub"] == "local" and folder.config["simulators"] == []
    calls = [e for e in folder.events() if e["type"] == "model_call" and e["role"] == "sub"]
    assert calls and all(e["error"] is None for e in calls)
    assert folder.scores() is not None


def test_sweep_json_keeps_a_digest_of_the_generator_secret_and_old_records_resume(tmp_path):
    secret = "s3cr3t-of-the-sweep"
    digest = hashlib.sha256(secret.encode()).hexdigest()
    text = ('roots = ["scripted"]\nsubs = ["oracle"]\nmax_turns = [3]\n'
            f'[[generate]]\ndocs = 6\nseed = 2\nsecret = "{secret}"\nname = "gen"\n')
    spec = write_spec(tmp_path / "spec.toml", text)
    out = tmp_path / "out"
    first = run_sweep(spec, out, workers=1)
    assert (first.episodes, first.done) == (1, 1)
    raw = (out / "sweep.json").read_text()
    assert secret not in raw and raw.count(digest) == 2  # the spec and the room
    generation = json.loads((out / "rooms/gen/answer_key/generation.json").read_text())
    assert generation["secret"] == secret  # kept where the sandbox hides it
    old = json.loads(raw)  # a sweep.json written before digests: the secret in plain
    old["spec"]["generate"][0] = {**old["spec"]["generate"][0], "secret": secret}
    del old["spec"]["generate"][0]["secret_sha256"]
    old["rooms"][0]["generated"]["secret"] = old["rooms"][0]["generated"].pop("secret_sha256")
    old["rooms"][0]["generated"]["secret"] = secret
    (out / "sweep.json").write_text(json.dumps(old))
    again = run_sweep(spec, out, workers=1)
    assert (again.skipped, again.done) == (1, 1)
    assert secret not in (out / "sweep.json").read_text()
    other = write_spec(tmp_path / "other.toml", text.replace(secret, "another"))
    with pytest.raises(ConfigError, match="sweep of another spec .*differs in generate"):
        run_sweep(other, out)


def test_a_spec_names_sub_agent_models_in_a_table(tmp_path):
    spec = write_spec(tmp_path / "spec.toml", 'roots = ["scripted"]\nmax_turns = [3]\n'
                      'samples = 2\nsubs = [{fast = "oracle:recall=0.5", strong = "oracle"}, '
                      '"oracle"]\n[[generate]]\ndocs = 6\nsecret = "s"\n')
    result = run_sweep(spec, tmp_path / "out", workers=1)
    assert result.done == 4
    configs = [json.loads(p.read_text()) for p in (tmp_path / "out").rglob("config.json")]
    named = sorted(c["subs"]["fast"] + " " + c["subs"]["strong"] for c in configs
                   if "subs" in c)
    assert named == ["oracle:recall=0.5,seed=0 oracle:seed=0",
                     "oracle:recall=0.5,seed=1 oracle:seed=1"]
    assert sum("subs" not in c for c in configs) == 2
    with pytest.raises(ConfigError, match="sub-agent name '1x'"):
        run_sweep(write_spec(tmp_path / "bad.toml", 'roots = ["scripted"]\nsubs = [{1x = '
                             '"oracle"}]\n[[generate]]\ndocs = 6\nsecret = "s"\n'),
                  tmp_path / "bad")
