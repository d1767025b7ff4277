"""The synthetic data room generator (private modules; the public names live here).

Stages: :mod:`._plan` decides the company, planted findings, folders and every document;
:mod:`._render` writes the documents (in worker processes); :mod:`._rubric` writes the rubric,
the answer key and the gold memo; :mod:`._api` ties them together.
"""

from dealroom.room._generate._api import generate, generate_room
from dealroom.room._generate._findings import TYPES as CRITERION_TYPES
from dealroom.room._generate._kinds_cured import DISTRACTORS, LIVE
from dealroom.room._generate._plan import plan_room
from dealroom.room._generate._profiles import PROFILES
from dealroom.room._generate._settings import GenerateSettings, parse_count

ISSUE_KINDS = tuple(LIVE)
"""Kinds of planted issues."""
DISTRACTOR_KINDS = tuple(DISTRACTORS)
"""Kinds of distractors (cured issues, look-alike clauses)."""

__all__ = [
    "CRITERION_TYPES",
    "DISTRACTOR_KINDS",
    "ISSUE_KINDS",
    "PROFILES",
    "GenerateSettings",
    "generate",
    "generate_room",
    "parse_count",
    "plan_room",
]
