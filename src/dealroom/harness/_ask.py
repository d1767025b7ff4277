"""``dealroom ask``: a follow-up question on a finished run, answered by its root in the REPL
the run left.

    RUN/                        the finished run (its memo unchanged unless ``revise``)
    RUN/asks/1/                 a run folder: RUN's records up to its last turn, then the
        config.json             question's turns (``ask``: number, question, after_turn)
        trajectory.jsonl        (the ask's own segment starts at ``forked_from.events``)
        answer.json             question, answer, citations checked, status, usage of the
                                ask's own calls, turns
    RUN/asks/2/ ...             the next question; the REPL's ``answers`` lists 1's

The REPL is rebuilt by replaying the run's cells against the recorded sub-call, child and
host-tool answers (no model call is repeated), in a new process, on any machine with the same
room (``room=`` where it lies elsewhere; its documents' hashes must match the run's).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.files import read_json, write_json_atomic
from dealroom.errors import ConfigError, InputError
from dealroom.harness._api import check_same_room, get_harness, open_models
from dealroom.harness._common import room_digest, run_config
from dealroom.harness._protocol import Listener
from dealroom.runs import RunFolder, fork_run_folder, root_replies
from dealroom.types import Usage

if TYPE_CHECKING:
    from dealroom.harness._api import SubSpec
    from dealroom.models import ModelClient
    from dealroom.room import Room

ASKS = "asks"
_CITE = re.compile(r"\[(D\d{5})(?:\s*,?\s*pp?\.\s*(\d+))?")
ANSWER = "answer.json"


@dataclass
class AskResult:
    """One answered (or unanswered) follow-up question."""

    number: int
    folder: Path
    question: str
    answer: str | None
    status: str
    reason: str
    turns: int
    """Root turns the ask took (after the run's own)."""
    citations: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    revised: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "folder": str(self.folder)}


async def ask_run_async(run_dir: Path, question: str, *, root: str | ModelClient | None = None,
                        sub: SubSpec = None, models_file: Path | None = None,
                        max_turns: int = 10, max_cost_usd: float | None = None,
                        revise: bool = False, room: Path | None = None,
                        concurrency: int | None = None,
                        listeners: tuple[Listener, ...] = ()) -> AskResult:
    """Ask a finished RLM run ``question`` (see the module docstring); ``root``/``sub``
    default to the run's own models."""
    source = RunFolder.open(run_dir)
    impl = _rlm(source)
    if not question.strip():
        raise InputError("the question is empty")
    events = source.events()
    last, cut = _end_of_run(source, events)
    room_dir = Path(room) if room is not None else source.room
    _check_room(source, events, room_dir)
    number, answers = _next_ask(source.path)
    recorded = dict(source.config.get("settings") or {})
    spent = sum((Usage.from_dict(e.get("usage") or {}) for e in events[:cut]
                 if e.get("type") in ("model_call", "compaction")), Usage())
    settings = impl.settings(**{**recorded, "max_turns": last + max_turns, "max_tokens": None,
                                "max_seconds": None, "max_cost_usd": None if max_cost_usd is None
                                else spent.cost_usd + max_cost_usd})
    root = root or source.config.get("root")
    sub = sub or source.config.get("subs") or source.config.get("sub")
    if not root:
        raise ConfigError(f"{run_dir} names no root model in its config: pass root=")
    out = source.path / ASKS / str(number)
    follow_up = {"question": question.strip(), "after_turn": last, "number": number,
                 "answers": answers}
    async with open_models(impl, root, sub, models_file=models_file,
                           concurrency=concurrency or source.config.get("concurrency"),
                           room=room_dir) as (root_c, sub_c):
        config = run_config(impl.name, room_dir, settings, root=root_c, sub=sub_c,
                            concurrency=concurrency or source.config.get("concurrency"),
                            deliverables=source.deliverables)
        config["ask"] = {k: follow_up[k] for k in ("number", "question", "after_turn")}
        fork_run_folder(source, out, last, config, cut=cut)
        if (source.path / "tools").is_dir():  # the run's own copy of its sandboxed tools
            shutil.copytree(source.path / "tools", out / "tools")
        result, answer = await impl.ask(out, root=root_c, sub=sub_c, follow_up=follow_up,
                                        listeners=listeners)
    return _finish(source, out, follow_up, result, answer, last, cut, revise, room_dir)


def ask_run(run_dir: Path, question: str, **options: Any) -> AskResult:
    """Synchronous :func:`ask_run_async`."""
    import asyncio

    return asyncio.run(ask_run_async(run_dir, question, **options))


def _rlm(source: RunFolder) -> Any:
    harness = source.config.get("harness", "rlm")
    if harness != "rlm":
        raise ConfigError(f"{source.path} is a {harness} run: dealroom ask reopens an RLM "
                          "run's REPL")
    return get_harness("rlm")


def _end_of_run(source: RunFolder, events: list[dict[str, Any]]) -> tuple[int, int]:
    """The run's last root turn with a reply, and how many events come before what followed
    it (the root's ``run_end``, or a later turn's failed call)."""
    if not any(e.get("type") == "run_end" and e.get("agent") == "root" for e in events):
        raise ConfigError(f"{source.path} has not finished: resume it (dealroom resume) "
                          "before asking it a question")
    replies = root_replies(events)
    if not replies:
        raise ConfigError(f"{source.path} recorded no reply of its root: there is no REPL "
                          "to reopen")
    last = max(replies)
    for n, e in enumerate(events):
        if e.get("agent") != "root":
            continue
        if e.get("type") == "run_end" or (e.get("type") in ("model_call", "compaction")
                                          and e.get("role") == "root"
                                          and e.get("turn", 0) > last):
            return last, n
    return last, len(events)


def _check_room(source: RunFolder, events: list[dict[str, Any]], room: Path) -> None:
    start = next((e for e in events if e.get("type") == "run_start"), {})
    recorded = start.get("room_digest")
    if recorded is None:  # a run from before digests: documents, name and tokens
        check_same_room(source, events, room)
        return
    if room_digest(room) != recorded:
        raise InputError(f"the room at {room} is not the one {source.path} was run on: its "
                         "documents changed (their hashes differ); ask on the run's own room")


def _next_ask(run: Path) -> tuple[int, list[dict[str, Any]]]:
    """The next ask's number and the earlier asks' questions and answers."""
    answers = []
    number = 1
    while (run / ASKS / str(number)).exists():
        kept = run / ASKS / str(number) / ANSWER
        if kept.is_file():
            got = read_json(kept, InputError, "")
            answers.append({"question": got.get("question"), "answer": got.get("answer")})
        number += 1
    return number, answers


def _finish(source: RunFolder, out: Path, follow_up: dict[str, Any], result: Any,
            answer: str | None, last: int, cut: int, revise: bool, room: Path) -> AskResult:
    from dealroom.room import Room

    events = RunFolder.open(out).events()[cut:]
    usage = sum((Usage.from_dict(e.get("usage") or {}) for e in events
                 if e.get("type") in ("model_call", "compaction")), Usage())
    done = AskResult(follow_up["number"], out, follow_up["question"], answer, result.status,
                     result.reason, max(result.turns - last, 0),
                     check_citations(answer or "", Room.open(room)), usage.to_dict())
    if revise and answer is not None:
        done = replace(done, revised=_revise(source, out, last + done.turns))
    write_json_atomic(out / ANSWER, done.to_dict())
    return done


def _revise(source: RunFolder, out: Path, turn: int) -> bool:
    """Make the ask's memo the run's newest version: its deliverables copied to the run's
    ``output/`` and a version added to the run's memo history; False when unchanged."""
    from dealroom.runs import RunRecorder

    asked = RunFolder.open(out)
    if asked.memo_path is None or source.memo_path is None or not asked.memo_path.exists():
        return False
    new = (out / "output").glob("*")
    for path in new:
        shutil.copy2(path, source.path / "output" / path.name)
    recorder = RunRecorder.reopen(source, source.events())
    try:
        history = asked.memo_history()
        if history:
            recorder.memo_turn(turn, history[-1][1])
    finally:
        recorder.close()
    return True


def check_citations(answer: str, room: Room) -> list[dict[str, Any]]:
    """Each ``[D00042 p.3]`` of ``answer``: ``ok``, or ``why`` not (no such document, or a
    page past its last)."""
    out: list[dict[str, Any]] = []
    for doc_id, page in _CITE.findall(answer):
        entry: dict[str, Any] = {"doc": doc_id, "page": int(page) if page else None}
        try:
            doc = room.doc(doc_id)
        except KeyError:
            out.append({**entry, "ok": False, "why": "no such document in the room"})
            continue
        if page and not 1 <= int(page) <= doc.pages:
            out.append({**entry, "ok": False, "why": f"the document has {doc.pages} pages"})
            continue
        out.append({**entry, "ok": True})
    return out


def read_answers(run_dir: Path) -> list[dict[str, Any]]:
    """Every ``answer.json`` of ``run_dir``'s asks, in order."""
    out = []
    for folder in sorted((Path(run_dir) / ASKS).glob("*"), key=lambda p: (len(p.name), p.name)):
        if (folder / ANSWER).is_file():
            out.append(json.loads((folder / ANSWER).read_text()))
    return out
