"""``sweep.json`` is a typed, versioned record: a sweep folder written before opens as it is,
a damaged one is an InputError naming the file and the key, a bad write is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dealroom.errors import ConfigError, InputError
from dealroom.eval import SWEEP_VERSION, load_rows, read_sweep, sweep_spec
from dealroom.eval import _sweep_record as record_module
from dealroom.eval._sweep_record import check_sweep_written

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def v1_sweep(tmp_path) -> Path:
    return Path(shutil.copytree(FIXTURES / "v1-sweep", tmp_path / "v1-sweep"))


def test_the_committed_version_1_sweep_loads_as_it_is(v1_sweep):
    record = read_sweep(v1_sweep / "sweep.json")
    assert record["version"] == SWEEP_VERSION == 1 and record["counts"] == {"done": 1}
    [row] = load_rows(v1_sweep)
    assert (row.root, row.sub, row.max_turns, row.status) == ("scripted", "oracle", 6, "done")
    assert row.pass_rate == 1.0 and row.turns == 5 and row.simulated
    assert sweep_spec(v1_sweep)["max_turns"] == [6]
    run = Path(row.run)
    assert "version" not in json.loads((run / "scores.json").read_text())  # written before


def test_a_sweep_json_without_version_is_version_1_and_a_newer_one_is_refused(v1_sweep,
                                                                             monkeypatch):
    path = v1_sweep / "sweep.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in data.items() if k != "version"}))
    assert read_sweep(path)["version"] == 1 and len(load_rows(v1_sweep)) == 1
    path.write_text(json.dumps({**data, "version": 2}))
    with pytest.raises(ConfigError, match=r"sweep.json has format version 2; this dealroom "
                                          "reads 1 to 1: upgrade dealroom"):
        read_sweep(path)
    monkeypatch.setattr(record_module, "SWEEP_VERSION", 2)  # the next format renames a key
    monkeypatch.setitem(record_module.SWEEP_MIGRATIONS, 1, lambda d: {
        ("made_at" if k == "created_at" else k): v for k, v in d.items()})
    path.write_text(json.dumps(data))
    migrated = record_module.read_sweep(path)
    assert migrated["version"] == 2 and migrated["made_at"] == data["created_at"]


@pytest.mark.parametrize("change,message", [
    (lambda d: d["episodes"][0].update(seed="1"), r"episodes\[0\].seed is '1', not an integer"),
    (lambda d: d["episodes"][0].update(pass_rate="high"),
     r"episodes\[0\].pass_rate is 'high', not a number"),
    (lambda d: d.update(episodes={}), "episodes is {}, not a list"),
    (lambda d: d["rooms"][0].update(path=None), r"rooms\[0\].path is None, not a string"),
])
def test_a_damaged_sweep_json_names_the_file_and_the_key(v1_sweep, change, message):
    path = v1_sweep / "sweep.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=f"sweep.json: {message}: the sweep folder is damaged"):
        load_rows(v1_sweep)


def test_a_sweep_json_with_a_wrong_key_is_not_written(v1_sweep):
    data = read_sweep(v1_sweep / "sweep.json")
    check_sweep_written(data)
    with pytest.raises(ValueError, match=r"sweep.json written with episodes\[0\].pass, a key"):
        check_sweep_written({**data, "episodes": [{**data["episodes"][0], "pass": 1.0}]})
    with pytest.raises(ValueError, match="sweep.json written without counts"):
        check_sweep_written({k: v for k, v in data.items() if k != "counts"})
    with pytest.raises(ValueError, match=r"written with episodes\[0\].attempts '1', not an int"):
        check_sweep_written({**data, "episodes": [{**data["episodes"][0], "attempts": "1"}]})

