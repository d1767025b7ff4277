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


def make_run(run_dir: Path, memo: str | None, room: Path = FIXTURE_ROOM) -> Path:
    """A run folder with ``config.json`` and (unless ``memo`` is None) ``output/memo.md``."""
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"room": str(room), "harness": "rlm"}))
    (run_dir / "trajectory.jsonl").write_text("")
    if memo is not None:
        (run_dir / "output").mkdir()
        (run_dir / "output" / "memo.md").write_text(memo)
    return run_dir


@pytest.fixture(scope="session")
def run_maker():
    """:func:`make_run`, to build run folders on the fixture room."""
    return make_run
