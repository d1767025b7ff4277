"""``dealroom export sft``: judged runs become a chat dataset and masked, pre-tokenized rows.

    RUNS / SWEEPS ──find_runs──▶ select_runs: per room the judged runs at or above the room's
        │                        median pass rate (and the bars), the best N
    kept run ──agent_segments(events)──▶ the root's messages, exactly as it saw them (one
        │                                 chat per context: a history that dropped earlier
        │                                 reasoning or was compacted starts a new one)
        │                                     ──▶ DS/train.jsonl     {"messages": [...], "run",
        │                                                             "metadata"}
        └─ with a tokenizer ──conversation_rows(messages, sampled=recorded ids)──▶
                                              ──▶ DS/tokenized.jsonl {"input_ids",
                                                  "assistant_masks", "run", "turns",
                                                  "metadata"}
    Each row's ``metadata`` names the run, its models and its room (:func:`row_metadata`).
    DS/manifest.json: the selection, every kept run (why, rows, tokens) and every run left
    out (reason, why)

An ``hf:`` root's replies are its recorded sampled ids (``tokens.jsonl``) when they decode to
the reply with the given tokenizer; other replies are re-tokenized through the chat template,
with the check that the tokens give the text back. An episode longer than ``max_length`` is
split turn by turn (:func:`~dealroom.train.conversation_rows`). With ``train_subs`` the
children's conversations follow (chats and rows) and each sub-call with an exact record is a
row (``dealroom.train._subseq``); rows then say whose they are (``agent``, ``kind``,
``call_id``). The dataset is built in a
temporary folder beside ``DS`` and moved into place whole: an interrupted export leaves no
half-written ``DS``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.files import write_json_atomic
from dealroom._util.redact import dumps_redacted
from dealroom.errors import ConfigError, DealroomError, InputError
from dealroom.runs import RunFolder, agent_segments, find_runs, read_tokens, whole_reply
from dealroom.train._mask import TrainingRow, conversation_rows
from dealroom.train._select import Selection, check_bars, select_runs, unreadable
from dealroom.train._settings import SFTSettings
from dealroom.train._sft import TOKENIZED
from dealroom.train._subseq import CHILD, ROOT, SUB, call_row, child_agents, sub_calls

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from dealroom.runs import Segment, TokenRecord

TRAIN = "train.jsonl"
Chat = tuple[str, list[dict[str, str]]]
"""An agent (``root``, or a child's ``root/c3-1``) and the messages of one of its contexts."""
MANIFEST = "manifest.json"
EXPORT_VERSION = 1
DEFAULT_MAX_LENGTH = SFTSettings.model_fields["max_length"].default
"""Longest row written, by default the SFT default: rows train without being cut."""


@dataclass
class ExportResult:
    """What ``export_sft`` wrote."""

    out: Path
    kept: int
    """Runs in the dataset."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Runs left out, by reason (see the manifest for each run's)."""
    rows: int = 0
    """Rows of ``tokenized.jsonl`` (0 without a tokenizer)."""
    tokens: int = 0
    """Tokens over those rows."""
    trained_tokens: int = 0
    """Of those, the tokens with mask 1 (the root's own)."""
    skipped_replies: int = 0
    """Replies too long to fit ``max_length`` even right after the task."""
    child_rows: int = 0
    """``train_subs``: of the rows, those of the runs' children (``rlm``, ``rlm_batch``)."""
    sub_rows: int = 0
    """``train_subs``: of the rows, the sub-calls' (one each)."""
    train_subs: bool = False
    """The children's and sub-calls' rows were asked for."""
    subs_left_out: int = 0
    """``train_subs``: answered sub-calls left out: no exact token record, or too long."""
    tokenizer: str | None = None
    seconds: float = 0.0
    rule: str = ""
    """The selection in words (``select_rule``)."""
    simulated: list[str] = field(default_factory=list)
    """Kept runs whose root or sub-agent was a simulator (root ``scripted``, sub ``oracle``)."""


def export_sft(runs: Sequence[Path], out: Path, *, min_pass_rate: float | None = None,
               min_coverage: float | None = None, top_k: int | None = None,
               room_median: bool = True, reward: Any = None,
               tokenizer: str | None = None, max_length: int = DEFAULT_MAX_LENGTH,
               force: bool = False, train_subs: bool = False,
               progress: Callable[[int, int], None] | None = None) -> ExportResult:
    """Select judged runs (:func:`~dealroom.train.select_runs`) and write the dataset ``out``.

    ``runs`` are run folders, sweeps or folders of either. ``tokenizer`` is an ``hf:`` spec;
    without one only ``train.jsonl`` and ``manifest.json`` are written. An existing ``out``
    is replaced only with ``force`` and only when it is a dataset (holds ``manifest.json``).
    ``reward``: a reward spec (docs/training.md, "The reward") that ranks the runs and gives
    the room median; None: the pass rate. ``train_subs`` (needs ``tokenizer``): the runs'
    children's conversations and their sub-calls with exact token records are rows too
    (each row's ``agent``, ``kind`` and ``call_id`` say whose).
    """
    start = time.perf_counter()
    check_bars(min_pass_rate, min_coverage, top_k)
    if max_length < 16:
        raise ConfigError(f"max_length must be at least 16 tokens, got {max_length}")
    if train_subs and tokenizer is None:
        raise InputError("--train-subs needs --tokenizer: a sub-call is trained from the "
                          "token ids its model recorded, checked with that tokenizer")
    out = Path(out)
    _check_out(out, force)
    run_dirs = find_runs(runs)
    tok = _tokenizer(tokenizer)
    selection = select_runs(run_dirs, min_pass_rate=min_pass_rate, min_coverage=min_coverage,
                            top_k=top_k, room_median=room_median, reward=reward)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        result = ExportResult(out, 0, tokenizer=tokenizer, rule=select_rule(
            min_pass_rate, min_coverage, top_k, room_median), train_subs=train_subs)
        kept = _write(tmp, selection, tok, max_length, result, progress, train_subs)
        selection.kept = kept
        result.kept = len(kept)
        result.left_out = dict(Counter(r["reason"] for r in selection.left_out))
        result.simulated = [r["run"] for r in selection.simulated]
        result.seconds = time.perf_counter() - start
        write_json_atomic(tmp / MANIFEST, _manifest(runs, selection, result, min_pass_rate,
                                                    min_coverage, top_k, room_median,
                                                    max_length))
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return result


def select_rule(min_pass_rate: float | None, min_coverage: float | None, top_k: int | None,
                room_median: bool) -> str:
    """The selection in words: ``pass rate >= room median, coverage >= 0.2, best 2 per room``."""
    parts = (["pass rate >= its room's median"] if room_median else []) + \
        [f"{name} >= {bar:g}" for name, bar in (("pass rate", min_pass_rate),
                                                ("coverage", min_coverage)) if bar is not None]
    parts += [f"best {top_k} per room"] if top_k is not None else []
    return ", ".join(parts) or "every finished, cleanly judged run (no selection)"


def _check_out(out: Path, force: bool) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        if not force:
            raise ConfigError(f"{out} already exists: choose another --out or pass --force")
        if not (out / MANIFEST).is_file():
            raise ConfigError(f"{out} exists and is not a dataset (no {MANIFEST}): "
                              "refusing to replace it")


def _tokenizer(spec: str | None) -> PreTrainedTokenizerBase | None:
    if spec is None:
        return None
    from dealroom.models import load_hf_tokenizer

    return load_hf_tokenizer(spec)


def _write(folder: Path, selection: Selection, tokenizer: PreTrainedTokenizerBase | None,
           max_length: int,
           result: ExportResult, progress: Callable[[int, int], None] | None,
           train_subs: bool = False) -> list[dict[str, Any]]:
    """Write the kept runs' conversations (and rows); the entries that made it in."""
    kept: list[dict[str, Any]] = []
    with ExitStack() as stack:
        chats = stack.enter_context(open(folder / TRAIN, "w", encoding="utf-8"))
        rows = (stack.enter_context(open(folder / TOKENIZED, "w", encoding="utf-8"))
                if tokenizer is not None else None)
        for n, entry in enumerate(selection.kept, 1):
            try:
                segments, episode_rows, info = _episode(Path(entry["run"]), tokenizer,
                                                        max_length, train_subs)
            except (DealroomError, OSError, KeyError, TypeError, ValueError,
                    AttributeError) as exc:
                # one damaged run never sinks the export: it is left out, saying why
                why = unreadable(exc) if isinstance(exc, DealroomError | OSError) else \
                    f"its records are malformed ({type(exc).__name__}: {exc})"
                segments, episode_rows, info = None, [], {"reason": "unreadable", "why": why}
            if segments is None:
                selection.left_out.append({**entry, **info})
            else:
                meta = row_metadata(Path(entry["run"]), entry.get("pass_rate"))
                for n_seg, (agent, messages) in enumerate(segments):  # one chat per context
                    where = {"agent": agent} if train_subs else {}
                    chats.write(dumps_redacted({"messages": messages, "run": entry["run"],
                                                **where,
                                                "metadata": {**meta, "segment": n_seg}},
                                               ensure_ascii=False)[1] + "\n")
                for row in episode_rows:
                    assert rows is not None
                    whose = {"agent": row.agent, "kind": row.kind, "call_id": row.call_id} \
                        if train_subs else {}
                    rows.write(json.dumps({"input_ids": row.input_ids,
                                           "assistant_masks": row.assistant_masks,
                                           "run": entry["run"], "turns": row.turns, **whose,
                                           "metadata": meta}) + "\n")
                _count(result, info)
                kept.append({**entry, **info})
            if progress is not None:
                progress(n, len(selection.kept))
    return kept


def _episode(run: Path, tokenizer: PreTrainedTokenizerBase | None, max_length: int,
             train_subs: bool = False
             ) -> tuple[list[Chat] | None, list[TrainingRow], dict[str, Any]]:
    """The run's conversation (one per segment: a history that dropped reasoning or was
    compacted shows the model a new context), its rows and their figures;
    ``(None, [], {reason, why})`` when it cannot be used. With ``train_subs``, the children's
    conversations and the exact sub-calls follow the root's (each row's ``agent``)."""
    folder = RunFolder.open(run)
    events = folder.events()
    segments = agent_segments(events)
    calls = [c for segment in segments for c in segment.calls]
    if not calls:
        return None, [], {"reason": "no_replies",
                          "why": "the root replied nothing (every call failed)"}
    chats = [(ROOT, segment.messages) for segment in segments]
    info: dict[str, Any] = {"replies": len(calls), "segments": len(segments)}
    if tokenizer is None:
        return chats, [], info
    try:
        rows, skipped, used = _agent_rows(folder, segments, tokenizer, max_length, ROOT)
    except ConfigError as exc:
        return None, [], {"reason": "tokenize",
                          "why": f"cannot tokenize the conversation: {exc}"}
    if not rows:
        return None, [], {"reason": "too_long", "why": f"no reply fits in {max_length} tokens "
                                                       "after the system prompt and the task"}
    info.update(
        token_source="sampled" if used == len(calls) else "template" if not used else "mixed",
        rows=len(rows), tokens=sum(len(r.input_ids) for r in rows),
        trained_tokens=sum(sum(r.assistant_masks) for r in rows), skipped_replies=skipped)
    if train_subs:
        rows += _other_rows(folder, events, tokenizer, max_length, chats, info)
    return chats, rows, info


def _agent_rows(folder: RunFolder, segments: list[Segment],
                tokenizer: PreTrainedTokenizerBase, max_length: int, kind: str
                ) -> tuple[list[TrainingRow], list[int], int]:
    """One agent's rows (each marked with ``kind`` and the agent), the replies too long for
    a row, and how many replies were their sampled ids."""
    rows: list[TrainingRow] = []
    skipped: list[int] = []
    used = done = 0
    for segment in segments:
        own = [_sampled(folder, call, tokenizer) for call in segment.calls]
        used += sum(r is not None for r in own)
        sampled = [None] * segment.first + own
        episode = conversation_rows(segment.messages, tokenizer, max_length=max_length,
                                    sampled=sampled, train_from=segment.first)
        for row in episode.rows:  # turns count the run's replies, not the segment's
            row.turns = [done + t - segment.first for t in row.turns]
            row.kind, row.agent = kind, str(segment.calls[0].get("agent") or ROOT)
        rows += episode.rows
        skipped += [done + t - segment.first for t in episode.skipped]
        done += len(segment.calls)
    return rows, skipped, used


def _other_rows(folder: RunFolder, events: list[dict[str, Any]],
                tokenizer: PreTrainedTokenizerBase, max_length: int,
                chats: list[Chat], info: dict[str, Any]) -> list[TrainingRow]:
    """``train_subs``: each child's rows (its chats added to ``chats``), then one row per
    sub-call with an exact token record; their figures go into ``info``."""
    rows: list[TrainingRow] = []
    children = 0
    for agent in child_agents(events):
        segments = agent_segments(events, agent)
        try:
            found, _, _ = _agent_rows(folder, segments, tokenizer, max_length, CHILD)
        except ConfigError:
            continue  # a child whose conversation cannot be tokenized: its root still counts
        chats += [(agent, segment.messages) for segment in segments]
        children += len(found)
        rows += found
    calls, missed = sub_calls(folder.path, events, tokenizer)
    long = 0
    for sub in calls:
        row = call_row(sub.record)
        if len(row.input_ids) > max_length:
            long += 1
            continue
        row.kind, row.agent, row.call_id = SUB, str(sub.call.get("agent") or ROOT), \
            str(sub.call.get("call_id"))
        rows.append(row)
    info.update(child_rows=children, sub_rows=len(rows) - children, subs_inexact=missed,
                subs_too_long=long)
    for name in ("rows", "tokens", "trained_tokens"):
        info[name] += sum(1 if name == "rows" else len(r.input_ids) if name == "tokens"
                          else sum(r.assistant_masks) for r in rows)
    return rows


def _sampled(folder: RunFolder, call: dict[str, Any],
             tokenizer: PreTrainedTokenizerBase) -> TokenRecord | None:
    """The call's recorded token record when it decodes to its reply with ``tokenizer``."""
    from dealroom.models import reply_text

    if not call.get("tokens"):
        return None
    record = read_tokens(folder.path, call["tokens"])
    return record if reply_text(tokenizer, record) == whole_reply(call) else None


def _count(result: ExportResult, entry: dict[str, Any]) -> None:
    result.rows += entry.get("rows", 0)
    result.tokens += entry.get("tokens", 0)
    result.trained_tokens += entry.get("trained_tokens", 0)
    result.skipped_replies += len(entry.get("skipped_replies", []))
    result.child_rows += entry.get("child_rows", 0)
    result.sub_rows += entry.get("sub_rows", 0)
    result.subs_left_out += entry.get("subs_inexact", 0) + entry.get("subs_too_long", 0)


def _manifest(sources: Sequence[Path], selection: Selection, result: ExportResult,
              min_pass_rate: float | None, min_coverage: float | None, top_k: int | None,
              room_median: bool, max_length: int) -> dict[str, Any]:
    return {
        "version": EXPORT_VERSION,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "sources": [str(s) for s in sources],
        "selection": {"min_pass_rate": min_pass_rate, "min_coverage": min_coverage,
                      "top_k": top_k, "room_median": room_median,
                      "reward": selection.reward, "medians": selection.medians,
                      "rule": result.rule},
        "tokenizer": result.tokenizer,
        "max_length": max_length,
        "files": {"conversations": TRAIN,
                  "tokenized": TOKENIZED if result.tokenizer else None},
        "totals": {"runs": len(selection.kept) + len(selection.left_out),
                   "kept": result.kept, "left_out": result.left_out, "rows": result.rows,
                   "tokens": result.tokens, "trained_tokens": result.trained_tokens,
                   "skipped_replies": result.skipped_replies,
                   "simulated": len(result.simulated),
                   **({"child_rows": result.child_rows, "sub_rows": result.sub_rows,
                       "subs_left_out": result.subs_left_out} if result.train_subs else {})},
        **({"train_subs": True} if result.train_subs else {}),
        "kept": selection.kept,
        "left_out": selection.left_out,
        "models": {str(k["run"]): _models_of(Path(k["run"])) for k in selection.kept},
    }


def row_metadata(run: Path, pass_rate: float | None) -> dict[str, Any]:
    """What every row of ``run`` says about where it came from: the run (its folder's name
    and path), the root's model and the default sub-agent's, each named sub-agent's as
    ``sub_models`` (``"fast=A, strong=B"``; empty with one sub-agent), the room (its name and
    path), the
    harness and the run's judged pass rate. The same keys and types in every row, so
    ``datasets`` loads them as one ``metadata`` column of structs."""
    config = RunFolder.open(run).config
    models = config.get("models") or {}

    def model(role: str) -> str:
        record = models.get(role)
        if isinstance(record, dict) and record.get("model"):
            return str(record["model"])
        spec = config.get(role)
        return str(spec).split(",")[0].split("@")[0] if spec else ""

    room = str(config.get("room") or "")
    named = ", ".join(f"{role[4:]}={model(role)}" for role in models if role.startswith("sub."))
    return {"run": run.name, "run_path": str(run), "model": model("root"),
            "sub_model": model("sub"), "sub_models": named,
            "room": Path(room).name, "room_path": room,
            "harness": str(config.get("harness") or ""),
            "pass_rate": None if pass_rate is None else float(pass_rate)}


def _models_of(run: Path) -> dict[str, Any]:
    """Role → which endpoint and model played it in ``run`` (its ``config.json``)."""
    try:
        return dict(RunFolder.open(run).config.get("models") or {})
    except DealroomError:
        return {}
