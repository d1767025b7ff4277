"""Shared fixtures: a small ingested room, and run folders built by hand (on the judge's
fixture room and on tiny rooms)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.llama import llama_server, llama_think_server  # noqa: F401  (fixtures)

from dealroom.room import ingest

JUDGE_ROOM = Path(__file__).parent / "judge" / "fixtures" / "room"
"""The hand-made fixture room with a full rubric (tests/judge/fixtures/room)."""


PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy",
                   "NO_PROXY")


@pytest.fixture(autouse=True)
def _no_proxy_from_the_shell(monkeypatch):
    """Tests reach only the loopback servers they start: a proxy this shell sets is not used
    (the proxy tests set their own)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_embeddings_unless_asked(monkeypatch):
    """The CLI builds rooms as without the [search] extra (no passage embeddings: loading the
    model and embedding every room would cost seconds a test); tests of hybrid search ask for
    them (``dense=True``, ``--dense``)."""
    monkeypatch.setattr("dealroom.cli._ingest.search_extra", lambda: False)


@pytest.fixture(autouse=True)
def _no_secrets_from_other_tests():
    """Each test starts knowing no secret to redact (the set is the process's)."""
    from dealroom._util.redact import SECRETS

    SECRETS.clear()
    yield
    SECRETS.clear()


def make_run(run_dir: Path, memo: str | None, room: Path = JUDGE_ROOM) -> Path:
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


def _room(path: Path, tokens: int) -> Path:
    path.mkdir(parents=True)
    doc = {
        "id": "D00001",
        "path": "documents/a.txt",
        "title": "a",
        "category": "c",
        "folder": "c/f",
        "format": "txt",
        "pages": 1,
        "tokens": tokens,
        "sha256": "",
        "bytes": 0,
    }
    (path / "room.json").write_text(json.dumps({"name": path.name, "documents": [doc]}))
    return path


def _call(role: str, inp: int, out: int, cost: float) -> dict:
    return {
        "type": "model_call",
        "role": role,
        "model": "m",
        "agent": "root",
        "depth": 0,
        "turn": 1,
        "usage": {"input_tokens": inp, "output_tokens": out, "cost_usd": cost},
    }


def _run(path: Path, room: Path, calls: list[dict], scores: dict | None = None) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"room": str(room), "harness": "rlm"}))
    events = [{"type": "run_start"}, *calls, {"type": "run_end", "status": "submitted"}]
    lines = [json.dumps({"seq": i, "t": float(i), **e}) for i, e in enumerate(events)]
    (path / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    if scores is not None:
        (path / "scores.json").write_text(json.dumps(scores))
    return path


@pytest.fixture
def summary_runs(tmp_path: Path) -> list[Path]:
    """Three run folders on two rooms, with known usage, scores and one stored metrics.json."""
    small, big = _room(tmp_path / "small", 1_000), _room(tmp_path / "big", 9_000)
    a = _run(
        tmp_path / "runs" / "a",
        small,
        [_call("root", 100, 10, 0.5), _call("sub", 900, 90, 1.0)],
        {
            "pass_rate": 0.5,
            "n_criteria": 4,
            "n_passed": 2,
            "n_errors": 0,
            "judge": {"name": "llm"},
            "usage": {"cost_usd": 0.25, "input_tokens": 40, "output_tokens": 4},
        },
    )
    b = _run(
        tmp_path / "runs" / "b",
        big,
        [_call("root", 300, 30, 1.0)] + [_call("sub", 100, 10, 0.1)] * 7,
        {
            "pass_rate": 1.0,
            "n_criteria": 4,
            "n_passed": 4,
            "n_errors": 0,
            "judge": {"name": "reference"},
        },
    )
    c = _run(tmp_path / "runs" / "c", small, [_call("root", 50, 5, 0.0)])
    (c / "metrics.json").write_text(
        json.dumps(
            {  # a stored metrics.json is taken as written
                "status": "max_turns",
                "usage": {
                    "total": {"input_tokens": 50, "output_tokens": 5, "cost_usd": 0.0},
                    "by_role": {"root": {"input_tokens": 50, "output_tokens": 5}},
                    "root_share": {"input": 1.0, "output": 1.0},
                },
                "behaviour": {"sub_calls": 0, "turns": 3},
                "coverage": {"coverage": 0.1, "tokens_total": 1_000},
            }
        )
    )
    return [a, b, c]


SMALL_ROOM_FILES = {
    "01 Corporate/1.1 Charter/Certificate of Incorporation.md":
        "Certificate of Incorporation of Falcon Bank Inc.\n\nAuthorised shares: 10,000,000.",
    "03 Material Contracts/3.2 Customer Agreements/Acme MSA.md":
        "Master Services Agreement between Falcon Bank Inc. and Acme Corp.\n\f"
        "Section 14.2 Change of Control. Acme may terminate this Agreement upon a change of "
        "control of the Company without Acme's prior written consent.\n\f"
        "Schedule 4. Termination fee payable to Acme: $2,500,000.",
    "05 Litigation/5.1 Pending/Demand letter.md":
        "Demand letter from Borealis LLP claiming damages of $1,200,000 for breach of the "
        "Services Agreement dated 2023-04-01.",
    "07 Regulatory/7.3 Permits/Permit register.md":
        "Permit register. Environmental permit EP-220 expired on 2024-01-31; renewal pending.",
}


@pytest.fixture(scope="session")
def small_room(tmp_path_factory):
    """Four Markdown documents in four categories, ingested as a room."""
    src = tmp_path_factory.mktemp("src")
    for rel, text in SMALL_ROOM_FILES.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    room = tmp_path_factory.mktemp("rooms") / "falcon"
    ingest(src, room)
    return room


@pytest.fixture(scope="session")
def generated_room(tmp_path_factory) -> Path:
    """A generated 20-document room (with its answer key), fixed by its seed and secret."""
    from dealroom.room import generate_room

    room = tmp_path_factory.mktemp("generated") / "g20"
    generate_room(room, docs=20, seed=1, secret="tests")
    return room

class SweepBuilder:
    """Writes ``sweep.json`` and the episodes' run folders the eval commands read."""

    def __init__(self, path: Path, **spec: Any) -> None:
        self.path = path
        self.spec = {"budget_visible": True, **spec}
        self.entries: list[dict[str, Any]] = []

    def episode(self, room: str, root: str, *, sub: str | None = "oracle", depth: int = 1,
                max_turns: int = 8, seed: int = 0, pass_rate: float = 0.0,
                all_pass: bool = False, by_type: dict[str, float] | None = None,
                by_turn: list[float] | None = None, metrics: dict | None = None,
                memo_turns: dict[int, str] | None = None, room_path: str = "",
                status: str = "done") -> Path:
        eid = f"{room}/{root}__{sub}/d{depth}-T{max_turns}-s{seed}"
        run = self.path / "episodes" / eid
        run.mkdir(parents=True)
        config = {"version": 1, "harness": "rlm", "room": room_path, "root": root, "sub": sub,
                  "settings": {"depth": depth, "max_turns": max_turns},
                  "simulators": ["oracle"] if sub == "oracle" else []}
        (run / "config.json").write_text(json.dumps(config))
        (run / "trajectory.jsonl").write_text(json.dumps(
            {"seq": 0, "t": 0.0, "type": "run_end", "agent": "root", "depth": 0,
             "status": "submitted", "reason": "", "turns": len(by_turn or [])}) + "\n")
        types = {k: {"pass_rate": v} for k, v in (by_type or {}).items()}
        if status == "done":
            (run / "scores.json").write_text(json.dumps(
                {"pass_rate": pass_rate, "all_pass": all_pass, "pass_rate_by_type": types}))
        if by_turn is not None:
            rows = [{"turn": t + 1, "pass_rate": v, "all_pass": v == 1.0,
                     "pass_rate_by_type": {}} for t, v in enumerate(by_turn)]
            (run / "scores_by_turn.json").write_text(json.dumps({"by_turn": rows}))
        if metrics is not None:
            (run / "metrics.json").write_text(json.dumps(metrics))
        if memo_turns:
            from dealroom.runs import RunFolder, RunRecorder

            recorder = RunRecorder(RunFolder(run))
            for turn, memo in memo_turns.items():
                recorder.memo_turn(turn, memo)
            recorder.close()
        self.entries.append({"id": eid, "room": room, "room_path": room_path, "root": root,
                             "sub": sub, "depth": depth, "max_turns": max_turns, "seed": seed,
                             "status": status})
        return run

    def write(self) -> Path:
        record = {"version": 1, "spec": self.spec, "episodes": self.entries}
        (self.path / "sweep.json").write_text(json.dumps(record))
        return self.path


@pytest.fixture
def sweep_builder(tmp_path):
    """``sweep_builder(name, **spec)`` → a :class:`SweepBuilder` under tmp_path."""
    return lambda name="sweep", **spec: SweepBuilder(tmp_path / name, **spec)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A tiny chat model written to disk (dealroom.testing): ``hf:PATH`` loads it."""
    pytest.importorskip("torch")
    import torch

    from dealroom.testing import tiny_model

    torch.set_num_threads(2)
    return tiny_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir, local_files_only=True)


HAND_ROOM = Path(__file__).parent / "judge" / "fixtures" / "handroom"
"""A hand-written 13-document room of contract text (tests/judge/fixtures/handroom): several
documents per category, cured issues and negative criteria, a polarity criterion and an
``llm_only`` one; ``gold_memo.md`` beside it."""


@pytest.fixture(scope="session")
def hand_room(tmp_path_factory) -> Path:
    """The hand-written room, ingested with its rubric."""
    room = tmp_path_factory.mktemp("hand") / "harbor"
    ingest(HAND_ROOM / "documents", room,
           task=json.loads((HAND_ROOM / "task.json").read_text()))
    return room
