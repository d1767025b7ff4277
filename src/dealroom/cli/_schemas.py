"""JSON Schemas of dealroom's typed contracts, generated into docs/schemas/ from the models.

    python -m dealroom.cli._schemas docs/schemas

One file per contract (``sweep-spec.schema.json``, ...), written from the pydantic models the
code validates with, so editors can check a spec as it is typed. A test fails when a file in
docs/schemas/ no longer matches its model.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

CONTRACTS = {
    "sweep-spec": "dealroom.eval:SweepSpec",
    "grpo-spec": "dealroom.train:GRPOSpec",
    "sft-settings": "dealroom.train:SFTSettings",
    "models-file": "dealroom.models:ModelEntry",
    "self-distill-spec": "dealroom.train:DistillSpec",
    "run-config": "dealroom.runs:RunConfig",
    "trajectory-event": "dealroom.runs:TrajectoryEvent",
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


if __name__ == "__main__":
    for path in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")):
        sys.stdout.write(f"{path}\n")
