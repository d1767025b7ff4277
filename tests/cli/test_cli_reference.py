"""docs/cli.md is generated from the commands' help and must match it."""

from pathlib import Path

from support.cli import dealroom

from dealroom.cli._reference import reference

DOC = Path(__file__).parents[2] / "docs" / "cli.md"


def test_cli_reference_is_current():
    assert DOC.read_text(encoding="utf-8") == reference(), (
        "docs/cli.md is stale: run `python -m dealroom.cli._reference > docs/cli.md`"
    )
    assert "## `dealroom run`" in DOC.read_text() and "--max-cost" in DOC.read_text()


def test_usage_errors_are_one_message_not_a_traceback():

    bad = dealroom("run", "x", "--out", "y", "--max-turns", "abc")
    assert bad.returncode == 2
    assert "Invalid value for '--max-turns'" in bad.stderr and "Traceback" not in bad.stderr
    missing = dealroom("run")
    assert missing.returncode == 2 and "Missing argument" in missing.stderr
    assert "Traceback" not in missing.stderr
