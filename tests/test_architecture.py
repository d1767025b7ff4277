"""docs/architecture.md is true to the code: the import order, config keys and event records."""

from __future__ import annotations

import ast
import json
import re
import shutil
import typing
from pathlib import Path

import pytest

from dealroom.runs import EVENT_TYPES, Event, RunConfig, event_fields
from dealroom.runs._events import OPTIONAL_ON_WRITE

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "dealroom"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
ENTRY = re.compile(r"^dealroom\.([A-Za-z_]\w*)[\w.]*:\w+$")


def documented_order() -> list[list[str]]:
    line = DOC.split("## Import order", 1)[1].split("\n\n")[2]
    return [[part.strip() for part in group.split(",")] for group in line.split("→")]


def part_of(path: Path) -> str:
    first = path.relative_to(SRC).parts[0]
    return first.removesuffix(".py")


def imported_parts(path: Path, parts: set[str]) -> set[str]:
    """The parts of dealroom that ``path`` imports (lazily too) or names as an entry point."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + (
                [f"{node.module}.{a.name}" for a in node.names] if node.module == "dealroom"
                else [])
        elif isinstance(node, ast.Constant) and (m := ENTRY.match(str(node.value))):
            found.add(m.group(1))
        for name in names:
            bits = name.split(".")
            if bits[0] == "dealroom" and len(bits) > 1 and bits[1] in parts:
                found.add(bits[1])
    return found


def test_every_part_imports_only_the_parts_before_it() -> None:
    order = documented_order()
    rank = {part: n for n, group in enumerate(order) for part in group}
    files = [p for p in SRC.rglob("*.py") if p.name != "__init__.py" or p.parent != SRC]
    present = {part_of(p) for p in files}
    assert present == set(rank), "add new parts to the import order in docs/architecture.md"
    wrong = sorted(
        f"{p.relative_to(SRC)} imports {target}"
        for p in files
        for target in imported_parts(p, present)
        if target != part_of(p) and rank[target] >= rank[part_of(p)]
    )
    assert wrong == []


def test_the_walk_sees_lazy_imports_and_entry_points(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("def f():\n    from dealroom.eval import summarize_runs\n"
                      "X = 'dealroom.cli._run:run'\nimport dealroom.runs._folder\n"
                      "from dealroom import errors\n")
    assert imported_parts(sample, {"eval", "cli", "runs", "errors"}) == {
        "eval", "cli", "runs", "errors"}


def imported_modules(path: Path, root: Path = SRC) -> set[str]:
    """Every ``dealroom...`` module (or name) that ``path`` imports, relative imports resolved
    (``root`` is the folder of the ``dealroom`` package)."""
    package = ["dealroom", *path.relative_to(root).parts[:-1]]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found |= {module} | {f"{module}.{a.name}" for a in node.names}
    return {m for m in found if m.startswith("dealroom.")}


def reaches_into(importer: Path, module: str) -> bool:
    """True when ``module`` is a private module of another part (or of a sibling subpackage,
    such as ``harness.rlm`` seen from ``harness.toolloop``); ``_util`` and the other private
    top-level parts are shared on purpose."""
    own = importer.relative_to(SRC).parts
    bits = module.split(".")[1:]
    if len(bits) < 2 or bits[0].startswith("_") or own == ("testing.py",):
        return False  # dealroom.testing gathers the parts' test helpers on purpose
    if bits[0] != own[0].removesuffix(".py"):
        return any(b.startswith("_") for b in bits[1:])
    sub = own[1] if len(own) > 2 else None
    return (len(bits) > 2 and not bits[1].startswith("_") and bits[1] != sub
            and any(b.startswith("_") for b in bits[2:]))


def test_no_part_imports_another_parts_private_modules() -> None:
    wrong = sorted(f"{p.relative_to(SRC)} imports {m}" for p in SRC.rglob("*.py")
                   for m in imported_modules(p) if reaches_into(p, m))
    assert wrong == [], "import the other part's public names (its __init__)"


def test_the_private_import_walk_sees_relative_and_sibling_imports(tmp_path: Path) -> None:
    fake = SRC / "harness" / "toolloop" / "_probe_example.py"
    assert reaches_into(fake, "dealroom.harness.rlm._engine")
    assert reaches_into(fake, "dealroom.room._index.ensure_index")
    assert not reaches_into(fake, "dealroom.harness._common")
    assert not reaches_into(fake, "dealroom.harness.toolloop._tools")
    assert not reaches_into(fake, "dealroom._util.files")
    assert not reaches_into(fake, "dealroom.testing")
    assert not reaches_into(SRC / "testing.py", "dealroom.models._mock")
    assert reaches_into(SRC / "train" / "_tiny.py", "dealroom.models._mock")
    sample = tmp_path / "x.py"
    sample.write_text("from dealroom.room._store import Room\nimport dealroom.eval._sweep\n")
    assert imported_modules(sample, tmp_path) >= {"dealroom.room._store", "dealroom.eval._sweep"}


# -- the run folder's records ------------------------------------------------------------------


def documented_table(heading: str) -> dict[str, list[str]]:
    section = DOC.split(heading, 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and cells:
            rows[cells[0].strip("`")] = re.findall(r"`(\w+)`", cells[1]) if len(cells) > 2 else []
    return rows


def test_the_documented_records_are_the_typed_ones() -> None:
    events = documented_table("### Trajectory events")
    assert set(events) == set(EVENT_TYPES)
    for type_, fields in events.items():
        assert tuple(fields) == event_fields(type_), type_
    assert set(documented_table("### config.json")) == set(typing.get_type_hints(RunConfig))


def test_the_run_folder_tree_names_every_file_of_the_format() -> None:
    import dealroom.runs as runs

    tree = DOC.split("## Run folder", 1)[1].split("```", 2)[1]
    for name in ("CONFIG", "TRAJECTORY", "MEMO", "MEMO_HISTORY", "METRICS", "SCORES",
                 "SCORES_BY_TURN"):
        assert getattr(runs, name) in tree, name


COMMON = set(typing.get_type_hints(Event))
ROOT_MODEL = [
    "```python\nr = llm_batch([{'prompt': 'read', 'docs': ['D00001']}, 'free text'])\n"
    "memo.section('Findings', 'Draft.')\nprint(r, echo('x'))\n```",
    "```python\nprint(rlm('Check D00002', docs=['D00002']))\n```",
    "```python\nsubmit()\n```",
]


def compacting_root(messages):
    """Prints more than a 2,048-token window holds over a few turns; summarizes when asked."""
    if "condense" in messages[0]["content"]:
        return "Printed words; nothing found."
    return "```python\nprint('word ' * 500)\n```"


@pytest.fixture(scope="module")
def written(small_room, tmp_path_factory):
    """Configs and events that real runs wrote: RLM at depth 2, tool loop (of a BudgetMix plan),
    resume, fork, REPL."""
    import asyncio

    from dealroom.harness import ask_run, fork_run, resume_run, run_agent
    from dealroom.harness.rlm import open_repl
    from dealroom.models import ScriptedModel

    tmp = tmp_path_factory.mktemp("written")

    def sub():
        return ScriptedModel(["```python\nsubmit('child: nothing found')\n```"], cycle=True,
                             name="sub", context_window=4096)

    host_tools = tmp / "host_tools.py"
    host_tools.write_text('def echo(text: str) -> str:\n    """Echo."""\n    return text\n')
    run_agent(small_room, tmp / "rlm", root=ScriptedModel(ROOT_MODEL), sub=sub(), depth=2,
              host_tools=[str(host_tools)])
    run_agent(small_room, tmp / "named", root=ScriptedModel(ROOT_MODEL),
              sub={"fast": sub(), "strong": sub()}, depth=2)
    run_agent(small_room, tmp / "compacted", root=ScriptedModel(
        [compacting_root], cycle=True, context_window=2048), sub=sub(), max_turns=6)
    run_agent(small_room, tmp / "tools", harness="toolloop", root="scripted",
              budgetmix={"plan": "0123456789ab", "step": 0, "group": 1})
    cut = Path(shutil.copytree(tmp / "rlm", tmp / "resumed"))
    lines = (cut / "trajectory.jsonl").read_text().splitlines()
    (cut / "trajectory.jsonl").write_text("\n".join(lines[:3]) + "\n")
    resume_run(cut, root=ScriptedModel(ROOT_MODEL), sub=sub())
    fork_run(tmp / "rlm", 1, tmp / "fork", root=ScriptedModel(ROOT_MODEL[1:]), sub=sub())

    async def repl():
        async with open_repl(small_room, sub(), out=tmp / "repl") as session:
            await session.run("print(llm('hi'), llm_batch([{'prompt': 'n?', 'schema': {}}]))")

    asyncio.run(repl())
    ask_run(tmp / "rlm", "Anything else?", root=ScriptedModel(["```python\nsubmit('no')\n```"]),
            sub=sub())
    runs = [tmp / name for name in ("rlm", "named", "compacted", "tools", "resumed", "fork",
                                    "repl", "rlm/asks/1")]
    configs = [json.loads((r / "config.json").read_text()) for r in runs]
    events = [json.loads(line) for r in runs
              for line in (r / "trajectory.jsonl").read_text().splitlines()]
    return configs, events


def test_real_runs_write_exactly_the_documented_config_keys(written) -> None:
    configs, _ = written
    documented = set(documented_table("### config.json"))
    assert set().union(*configs) == documented
    assert {c["harness"] for c in configs} == {"rlm", "toolloop", "repl"}


def test_real_runs_write_exactly_the_documented_events(written) -> None:
    _, events = written
    documented = documented_table("### Trajectory events")
    assert {e["type"] for e in events} == set(documented)
    seen: dict[str, set[str]] = {}
    for e in events:
        optional = set(OPTIONAL_ON_WRITE.get(e["type"], ())) & {"parsed"}  # schema calls only
        fields = set(e) - COMMON
        assert set(documented[e["type"]]) - optional <= fields, e["type"]
        assert fields <= set(documented[e["type"]]), e["type"]
        assert set(e) >= COMMON, e["type"]
        seen.setdefault(e["type"], set()).update(fields)
    assert seen == {k: set(v) for k, v in documented.items()}
