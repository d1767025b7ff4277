"""``dealroom eval``: bad input is one line on stderr, exit 1 (2 for a malformed spec), and
nothing is lost."""

import json

import pytest
from support.cli import dealroom


def dealroom_cli(*args):
    return dealroom(*args)  # in this process (support.cli)


def one_line(done, message, code=1):
    assert done.returncode == code, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize(("spec", "message", "code"), [
    ('rooms = ["{room}"]\nturns = [4]\n', "unknown key 'turns'", 2),
    ('rooms = ["{room}"]\nsamples = 0\n', "samples must be an integer of at least 1", 2),
    ('rooms = ["{room}/missing"]\n', "is not a room", 1),
    ('rooms = ["{small}"]\nsubs = ["oracle"]\n', "oracle cannot run on room falcon", 1),
])
def test_bad_sweeps_are_one_line(tmp_path, generated_room, small_room, spec, message, code):
    path = tmp_path / "spec.toml"
    path.write_text(spec.format(room=generated_room, small=small_room))
    one_line(dealroom_cli("eval", "sweep", path, "--out", tmp_path / "out"), message, code)
    assert not (tmp_path / "out").exists()


def test_another_spec_is_refused_and_nothing_is_touched(tmp_path, generated_room):
    out = tmp_path / "out"
    out.mkdir()
    record = {"version": 1, "spec": {"samples": 9}, "episodes": []}
    (out / "sweep.json").write_text(json.dumps(record))
    path = tmp_path / "spec.toml"
    path.write_text(f'rooms = ["{generated_room}"]\n')
    one_line(dealroom_cli("eval", "sweep", path, "--out", out), "sweep of another spec")
    assert json.loads((out / "sweep.json").read_text()) == record


def test_bad_reads_are_one_line(sweep_builder):
    sweep = sweep_builder(samples=1)
    sweep.episode("r1", "scripted", pass_rate=0.5)
    other = sweep_builder("other")
    other.episode("r2", "scripted", pass_rate=0.5)
    path, elsewhere = sweep.write(), other.write()
    one_line(dealroom_cli("eval", "passk", path, "--k", "2"), "k = 2 is more than the 1 sample")
    one_line(dealroom_cli("eval", "compare", path, elsewhere), "share no room")
    one_line(dealroom_cli("eval", "table", path, "--by", "colour"), "--by colour")
    one_line(dealroom_cli("eval", "analyze", f"{path}:root=nope"), "no episodes matching")
