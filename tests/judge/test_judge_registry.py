"""Judges that need no model register by name, through the hook harnesses and providers use."""

import json
import textwrap

import pytest

from dealroom.errors import ConfigError
from dealroom.judge import judge_memo, judge_names, judge_run, reference_judge

PLUGIN = '''
from dealroom.judge._scores import make_scores

def always_pass():
    async def judge(task, deliverables):
        verdicts = {c["id"]: ("pass", "always") for c in task["criteria"]}
        return make_scores(task, verdicts, {"name": "always"})
    judge.name, judge.args = "always", {}
    return judge
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "fake_dealroom_judge.py").write_text(PLUGIN)
    dist = tmp_path / "fake_dealroom_judge-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-dealroom-judge\n"
                                   "Version: 0.1\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent("""
        [dealroom.judges]
        always = fake_dealroom_judge:always_pass
        reference = fake_dealroom_judge:always_pass
    """))
    monkeypatch.syspath_prepend(str(tmp_path))


def test_a_registered_judge_is_chosen_by_name(plugin, room, tmp_path, run_maker):
    assert {"always", "reference"} <= set(judge_names())
    run = run_maker(tmp_path / "run", "nothing found")
    scores = judge_run(run, "always")
    assert scores.all_pass and scores.judge == {"name": "always"}
    stored = json.loads((run / "scores.json").read_text())
    assert stored["judge"] == {"name": "always"} and stored["run"] == "run"
    with_reference = judge_run(run, "always", compare="reference")  # still the built-in one
    assert with_reference.extra["agreement"]["with"] == "reference"
    reference = json.loads((run / "scores.reference.json").read_text())
    assert reference["judge"] == {"name": "reference"} and not reference["all_pass"]


def test_a_model_judge_is_compared_with_the_stored_reference_scores(plugin, tmp_path, run_maker):
    run = run_maker(tmp_path / "run", "- Beta may terminate on a change of control [D00002].")
    judge_run(run, "reference", out=run / "scores.reference.json")
    scores = judge_run(run, "always")
    assert scores.extra["agreement"]["with"] == "reference"


def test_the_reference_judge_refuses_a_rubric_it_cannot_score(room, tmp_path):
    copy = tmp_path / "room"
    copy.mkdir()
    task = json.loads((room / "task.json").read_text())
    for criterion in task["criteria"]:
        criterion.pop("expect")
    (copy / "task.json").write_text(json.dumps(task))
    for judge in ("reference", reference_judge()):
        with pytest.raises(ConfigError, match=r"has no expect blocks .* --judge MODEL"):
            judge_memo(copy, "memo", judge)
