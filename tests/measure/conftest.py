"""A small hand-made room and run folders with known numbers."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from dealroom.room import count_tokens

DOCS = {
    "D00001": (
        "01 Corporate/1.1 Charter",
        "charter.txt",
        "ACME HOLDINGS INC. CERTIFICATE OF INCORPORATION\n"
        "\n"
        "Article 1. The name of the corporation is Acme Holdings Inc.\n"
        "Article 2. The registered office is in Wilmington, Delaware.\n"
        "\f"
        "Article 3. The corporation may issue 10,000,000 shares of common stock.\n"
        "Signed\n",
    ),
    "D00002": (
        "03 Material Contracts/3.2 Customer Agreements",
        "msa.txt",
        "MASTER SERVICES AGREEMENT between Acme Holdings Inc. and Beta Retail LLC\n"
        "Section 9.2 Change of Control. Either party may terminate this Agreement upon a "
        "change of control of the other party without prior written consent.\n"
        "Signed\n"
        "Fees under this Agreement total $88.2 million over the initial term.\n",
    ),
    "D00003": (
        "03 Material Contracts/3.3 Leases",
        "lease.txt",
        "LEASE AGREEMENT for 100 Main Street\n"
        "Signed\n"
        "Section 9.2 Change of Control. Either party may terminate this Agreement upon a "
        "change of control of the other party without prior written consent.\n"
        "Rent is $42,000 per month.\n",
    ),
}


def write_room(root: Path, docs: dict[str, tuple[str, str, str]] = DOCS) -> Path:
    """Write a room folder with ``room.json`` and text documents; return its path."""
    records = []
    for doc_id, (folder, name, text) in docs.items():
        path = root / "documents" / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        records.append(
            {
                "id": doc_id,
                "path": str(path.relative_to(root)),
                "title": name,
                "category": folder.split("/")[0],
                "folder": folder,
                "format": "txt",
                "pages": text.count("\f") + 1,
                "tokens": count_tokens(text),
                "sha256": hashlib.sha256(text.encode()).hexdigest(),
                "bytes": len(text.encode()),
            }
        )
    manifest = {"version": 1, "name": "mini", "documents": records}
    (root / "room.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def write_run(
    run_dir: Path, events: list[dict[str, Any]], config: dict[str, Any] | None = None
) -> Path:
    """Write ``config.json`` and ``trajectory.jsonl`` (events get ``seq`` and ``t``)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(config or {}), encoding="utf-8")
    lines = []
    for seq, event in enumerate(events):
        full = {"seq": seq, "t": float(seq), "agent": "root", "depth": 0, **event}
        lines.append(json.dumps(full))
    (run_dir / "trajectory.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run_dir


@pytest.fixture
def room_dir(tmp_path: Path) -> Path:
    return write_room(tmp_path / "room")


@pytest.fixture(scope="session")
def mini_docs() -> dict[str, tuple[str, str, str]]:
    """Document id → (folder, file name, text) of the mini room."""
    return DOCS


@pytest.fixture(scope="session")
def room_writer():
    """:func:`write_room`, to build room folders."""
    return write_room


@pytest.fixture(scope="session")
def run_writer():
    """:func:`write_run`, to build run folders."""
    return write_run
