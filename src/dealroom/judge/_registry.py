"""Judges that need no model, by name, in the ``dealroom.judges`` entry-point group.

An entry is a factory ``() -> Judge``; ``reference`` is built in, registered through the same
hook as harnesses and providers. Any other ``--judge`` value is a judge model's spec, for the
LLM judge.
"""

from __future__ import annotations

from dealroom._util.plugins import Registry
from dealroom.judge._scores import Judge

GROUP = "dealroom.judges"
BUILTIN_JUDGES = {"reference": "dealroom.judge._reference:reference_judge"}
JUDGES = Registry(GROUP, BUILTIN_JUDGES, "judge")
BASELINE = "reference"
"""The judge whose stored ``scores.<name>.json`` another judge's scores are compared with."""


def judge_names() -> list[str]:
    """Every registered judge, built-in and installed."""
    return JUDGES.names()


def registered_judge(judge: object) -> Judge | None:
    """The judge registered as ``judge`` (built now), or None when ``judge`` is no such name."""
    if not isinstance(judge, str) or judge not in JUDGES:
        return None
    judge_: Judge = JUDGES.load(judge)()
    return judge_
