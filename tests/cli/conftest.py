"""The judge's fixture room, for the CLI's judge tests."""

from pathlib import Path

import pytest


@pytest.fixture
def room() -> Path:
    return Path(__file__).parents[1] / "judge" / "fixtures" / "room"
