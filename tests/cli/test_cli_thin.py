"""The CLI stays thin: commands call public names of the API, and only display*.py render."""

import ast
from pathlib import Path

CLI = Path(__file__).parents[2] / "src" / "dealroom" / "cli"
COMMANDS = [p for p in CLI.glob("*.py") if not p.name.startswith("display")]
RENDERING = {"print", "console", "err_console", "rich", "Console", "Table", "Live", "Progress"}


def imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return found


def test_commands_import_public_names_only():
    private = sorted(
        f"{path.name}: {name}" for path in CLI.glob("*.py") for name in imports(path)
        if name.startswith("dealroom.") and not name.startswith("dealroom.cli.")
        and any(part.startswith("_") and part != "__version__" for part in name.split(".")[1:])
    )
    assert private == []


def test_only_the_display_modules_render():
    rendering = sorted(
        f"{path.name}:{node.lineno} {name}"
        for path in COMMANDS if path.name != "_reference.py"  # the docs generator's own output
        for node in ast.walk(ast.parse(path.read_text()))
        for name in [getattr(node, "id", None) or getattr(node, "module", None) or ""]
        if name.split(".")[0] in RENDERING
    )
    assert rendering == []


def test_help_lists_every_command_in_its_workflow_panel():
    import re

    from typer.testing import CliRunner

    from dealroom.cli import WORKFLOW, app

    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    panels = re.findall(r"╭─ ([\w ]+?) ─", out)
    assert panels == ["Options", *(title for title, _ in WORKFLOW)]
    listed = re.findall(r"^│ ([a-z][\w-]*) ", out, re.M)
    assert listed == [name for _, names in WORKFLOW for name in names]
    assert "More" not in panels, "put the new command in a WORKFLOW panel"
