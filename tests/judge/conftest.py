"""The hand-made fixture room (tests/judge/fixtures/room) and run folders built on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURE_ROOM = Path(__file__).parent / "fixtures" / "room"


@pytest.fixture
def room() -> Path:
    return FIXTURE_ROOM


@pytest.fixture
def task() -> dict:
    return json.loads((FIXTURE_ROOM / "task.json").read_text())


@pytest.fixture
def gold() -> str:
    return (FIXTURE_ROOM / "answer_key" / "gold_memo.md").read_text()
