"""``metrics.json`` and ``scores.json`` are typed, versioned records: files written before
(``scores.json`` had no ``version``) open as they are, a damaged one is an InputError naming
the file and the key, a write with a wrong key or kind is refused and writes nothing."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from dealroom.errors import ConfigError, InputError
from dealroom.judge import Scores
from dealroom.judge._scores import CriterionResult
from dealroom.runs import SCORES_VERSION, RunFolder, _records

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def v1_run(tmp_path) -> Path:
    return Path(shutil.copytree(FIXTURES / "v1-run", tmp_path / "v1-run"))


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_the_version_1_run_s_unversioned_scores_read_migrated_to_version_2(v1_run):
    assert "version" not in json.loads((v1_run / "scores.json").read_text())
    folder = RunFolder.open(v1_run)
    scores = folder.scores()
    assert scores is not None and scores["version"] == SCORES_VERSION == 2
    assert Scores.from_dict(scores).pass_rate == 1.0
    # 1 -> 2: the headline from the counts (one of three criteria is negative)
    assert (scores["headline"], scores["headline_kind"]) == (1.0, "positive")
    metrics = folder.metrics()
    assert metrics is not None and metrics["version"] == 1
    assert metrics["behaviour"]["turns"] == 5 and metrics["usage"]["total"]["calls"] == 7


def test_a_newer_version_is_refused_and_an_older_one_migrated(v1_run, monkeypatch):
    edit(v1_run / "scores.json", lambda d: d.update(version=3))
    with pytest.raises(ConfigError, match=r"scores.json has format version 3; this dealroom "
                                          "reads 1 to 2: upgrade dealroom"):
        RunFolder.open(v1_run).scores()
    edit(v1_run / "metrics.json", lambda d: d.update(version="1"))
    with pytest.raises(ConfigError, match="metrics.json has format version '1'"):
        RunFolder.open(v1_run).metrics()
    edit(v1_run / "metrics.json", lambda d: d.update(version=1))
    monkeypatch.setattr(_records, "METRICS_VERSION", 2)  # the next format renames a key
    monkeypatch.setitem(_records.METRICS_MIGRATIONS, 1, lambda d: {
        ("seconds" if k == "wall_s" else k): v for k, v in d.items()})
    metrics = RunFolder.open(v1_run).metrics()
    assert metrics is not None and metrics["version"] == 2 and "seconds" in metrics


@pytest.mark.parametrize("name,change,message", [
    ("metrics.json", lambda d: d["behaviour"].update(turns="5"),
     "behaviour.turns is '5', not an integer"),
    ("metrics.json", lambda d: d["usage"]["by_role"]["root"].update(cost_usd="0"),
     "usage.by_role.root.cost_usd is '0', not a number"),
    ("metrics.json", lambda d: d.update(coverage=[]), "coverage is [], not an object"),
    ("scores.json", lambda d: d["criteria_results"][0].update(verdict=True),
     "criteria_results[0].verdict is True, not a string"),
    ("scores.json", lambda d: d.update(all_pass="yes"), "all_pass is 'yes', not true or false"),
    ("scores.json", lambda d: d["usage"].update(calls=1.5), "usage.calls is 1.5, not an integer"),
])
def test_a_damaged_file_names_the_file_and_the_key(v1_run, name, change, message):
    edit(v1_run / name, change)
    folder = RunFolder.open(v1_run)
    with pytest.raises(InputError, match=re.escape(f"{name}: {message}: the run folder is "
                                                   "damaged or was edited")):
        folder.metrics() if name == "metrics.json" else folder.scores()


def test_metrics_with_a_wrong_or_missing_key_are_not_written(v1_run):
    folder = RunFolder.open(v1_run)
    metrics = folder.metrics()
    assert metrics is not None
    (v1_run / "metrics.json").unlink()
    with pytest.raises(ValueError, match="metrics.json written with wal_s, a key its record"):
        folder.write_metrics({**metrics, "wal_s": 1.0})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(ValueError, match="metrics.json written without status"):
        folder.write_metrics({k: v for k, v in metrics.items() if k != "status"})  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"written with behaviour.turns 5.0, not an integer"):
        folder.write_metrics({**metrics, "behaviour": {**metrics["behaviour"], "turns": 5.0}})
    assert not (v1_run / "metrics.json").exists()
    folder.write_metrics(metrics)
    assert folder.metrics() == metrics


def test_scores_with_a_key_of_no_record_are_refused_when_built():
    results = [CriterionResult("C-001", "t", "pass", "r")]
    record = Scores(results, extra={"run": "r1"}).to_dict()
    assert record["version"] == 2 and record["run"] == "r1" and record["pass_rate"] == 1.0
    with pytest.raises(ValueError, match="scores.json written with runn, a key its record"):
        Scores(results, extra={"runn": "r1"}).to_dict()
    with pytest.raises(ValueError, match=r"criteria_results\[0\].verdict None, not a string"):
        Scores([CriterionResult("C-001", "t", None, "r")]).to_dict()  # type: ignore[arg-type]
