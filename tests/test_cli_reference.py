"""docs/cli.md is generated from the commands' help and must match it."""

from pathlib import Path

from dealroom.cli._reference import reference

DOC = Path(__file__).parents[1] / "docs" / "cli.md"


def test_cli_reference_is_current():
    assert DOC.read_text(encoding="utf-8") == reference(), (
        "docs/cli.md is stale: run `python -m dealroom.cli._reference > docs/cli.md`"
    )
    assert "## `dealroom run`" in DOC.read_text() and "--max-cost" in DOC.read_text()
