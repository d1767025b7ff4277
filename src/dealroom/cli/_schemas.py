"""JSON Schemas of dealroom's typed contracts, generated into docs/schemas/ from the models,
and the run folder's tables in docs/architecture.md generated from the same records.

    python -m dealroom.cli._schemas docs/schemas

One file per contract (``sweep-spec.schema.json``, ...), written from the pydantic models the
code validates with, so editors can check a spec as it is typed. The same command rewrites
the blocks between ``<!-- generated: NAME -->`` and ``<!-- end generated -->`` of the pages
in docs/ (``config.json``, ``trajectory events``, ``room.json``, ``task.json`` in
docs/architecture.md; ``metrics.json``, ``scores.json``, ``sweep.json`` in the pages that
define them). A test fails when a file
in docs/schemas/ or a block no longer matches its model.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

CONTRACTS = {
    "sweep-spec": "dealroom.eval:SweepSpec",
    "budgetmix-plan": "dealroom.eval:BudgetMixPlan",
    "grpo-spec": "dealroom.train:GRPOSpec",
    "sft-settings": "dealroom.train:SFTSettings",
    "models-file": "dealroom.models:ModelEntry",
    "hf-options": "dealroom.models:HFOptions",
    "rlm-settings": "dealroom.harness.rlm:RLMSettings",
    "self-distill-spec": "dealroom.train:DistillSpec",
    "run-config": "dealroom.runs:RunConfig",
    "trajectory-event": "dealroom.runs:TrajectoryEvent",
    "room": "dealroom.room:RoomManifest",
    "task": "dealroom.room:RoomTask",
    "lab-task": "dealroom.room:LabTask",
    "metrics": "dealroom.runs:Metrics",
    "scores": "dealroom.runs:ScoresRecord",
    "sweep": "dealroom.eval:SweepRecord",
}
"""File stem → the model it is generated from (``module:name``, a public name: a pydantic
model, or a type pydantic validates, such as a TypedDict or a discriminated union)."""


def schema(target: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the model ``target`` names, as validated on load."""
    module, _, name = target.partition(":")
    model = getattr(importlib.import_module(module), name)
    out: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                           **TypeAdapter(model).json_schema(mode="validation")}
    return out


def render(target: str) -> str:
    """``target``'s schema as the file holds it."""
    return json.dumps(schema(target), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def write_schemas(out: Path) -> list[Path]:
    """Write every contract's schema into ``out``; returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, target in CONTRACTS.items():
        path = out / f"{stem}.schema.json"
        path.write_text(render(target), encoding="utf-8")
        written.append(path)
    return written


def _md(text: str) -> str:
    """A docstring as one Markdown line: ``x`` and :role:`x` become `x`."""
    text = re.sub(r":\w+:`~?(?:[\w.]+\.)?([\w.]+)`", r"`\1`", " ".join(text.split()))
    return text.replace("``", "`").replace("|", "\\|")


def tables() -> dict[str, str]:
    """The generated Markdown tables of docs/architecture.md, by block name."""
    from pydantic import TypeAdapter

    from dealroom.runs import EVENT_TYPES, RunConfig, event_fields

    props = TypeAdapter(RunConfig).json_schema()["properties"]
    config = ["| key | what it holds |", "|---|---|"] + [
        f"| `{key}` | {_md(p.get('description', ''))} |" for key, p in props.items()]
    events = ["| type | fields | what happened |", "|---|---|---|"] + [
        f"| `{kind}` | {', '.join(f'`{f}`' for f in event_fields(kind))} | "
        f"{_md(record.__doc__ or '')} |" for kind, record in EVENT_TYPES.items()]
    return {"config.json": "\n".join(config), "trajectory events": "\n".join(events),
            **_room_tables(),
            **{name: key_table(target) for name, target in KEY_TABLES.items()}}


def _room_tables() -> dict[str, str]:
    """The keys of room.json's records and task.json's criteria, from their records."""
    from dealroom.room import Criterion, DocumentRecord, Expect, RoomManifest, RoomTask

    made = {}
    for block, model in (("room.json", RoomManifest), ("room.json documents", DocumentRecord),
                         ("task.json", RoomTask), ("task.json criteria", Criterion),
                         ("task.json expect", Expect)):
        found = TypeAdapter(model).json_schema()
        rows = ["| key | required | what it holds |", "|---|---|---|"] + [
            f"| `{key}` | {'yes' if key in found.get('required', []) else ''} | "
            f"{_md(p.get('description', ''))} |" for key, p in found["properties"].items()]
        made[block] = "\n".join(rows)
    return made


KEY_TABLES = {"metrics.json": "dealroom.runs:Metrics",
              "scores.json": "dealroom.runs:ScoresRecord",
              "sweep.json": "dealroom.eval:SweepRecord"}
"""Generated block → the record whose keys it lists (docs/measurement.md, docs/judging.md,
docs/evaluation.md)."""


def key_table(target: str) -> str:
    """A record's keys as a Markdown table, the keys of a record it holds (or a list of)
    spelled ``usage.total`` or ``episodes[].id`` (each record once)."""
    made = schema(target)
    rows = ["| key | meaning |", "|---|---|"]
    seen: set[str] = set()

    def walk(props: dict[str, Any], prefix: str) -> None:
        for key, prop in props.items():
            rows.append(f"| `{prefix}{key}` | {_md(prop.get('description', ''))} |")
            inner = prop.get("items", prop)
            ref = next((p["$ref"] for p in [inner, *inner.get("anyOf", [])] if "$ref" in p), None)
            name = ref.rsplit("/", 1)[-1] if ref else None
            if name and name not in seen:
                seen.add(name)
                walk(made["$defs"][name]["properties"],
                     f"{prefix}{key}{'[]' if 'items' in prop else ''}.")

    walk(made["properties"], "")
    return "\n".join(rows)


BLOCK = re.compile(r"(<!-- generated: (.+?) -->\n).*?(<!-- end generated -->)", re.S)


def with_tables(doc: str) -> str:
    """``doc`` with each generated block replaced by its table from the records."""
    made = tables()
    return BLOCK.sub(lambda m: f"{m.group(1)}{made[m.group(2)]}\n{m.group(3)}", doc)


def write_tables(doc: Path) -> None:
    """Rewrite the generated blocks of ``doc`` (docs/architecture.md) in place."""
    doc.write_text(with_tables(doc.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")
    for path in write_schemas(folder):
        sys.stdout.write(f"{path}\n")
    for doc in sorted(folder.parent.glob("*.md")):
        if "<!-- generated: " in doc.read_text(encoding="utf-8"):
            write_tables(doc)
            sys.stdout.write(f"{doc}\n")
