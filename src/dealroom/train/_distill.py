"""``dealroom train self-distill``: rejection-sampling self-distillation, round after round.

    DIR/ distill.json           the spec as loaded; a restart must give the same one
         rounds.json            one row per round (root, pass rate, coverage, kept, steps, loss)
         round-N/ sweep.toml    the round's sweep: the spec's sweep part, roots = [the root]
                  sweep/        K judged runs per room by the root (an ordinary sweep)
                  data/         the export: the best runs per room above the bars (manifest)
                  ckpt/         LoRA trained on data/, continuing round N-1's adapter

    round N:  sweep (root_N) ──judge──▶ export sft (select) ──▶ train sft ──▶ ckpt_N
              root_1 = model (or model,adapter=ADAPTER), root_N+1 = model,adapter=DIR/round-N/ckpt

``rounds`` rounds are trained, then round ``rounds + 1`` runs its sweep only: the pass rate of
the last checkpoint (a later, longer loop reuses it as that round's sample). Each stage's
result is its own folder, so a killed loop continues where it was: a sweep resumes itself, an
export is written whole or not at all, a training resumes from its last checkpoint, and a
finished stage is never redone. A round whose export keeps no run stops the loop.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealroom._util.files import read_json, write_json_atomic, write_text_atomic
from dealroom.errors import ConfigError
from dealroom.train._distill_spec import DistillSpec, load_distill_spec, to_toml
from dealroom.train._reward import TOTAL

DISTILL_JSON = "distill.json"
ROUNDS_JSON = "rounds.json"
DISTILL_VERSION = 1
STAGES = ("sweep", "export", "train")

Progress = Callable[[str, int, int], None]
"""``progress(what, done, total)``: ``what`` names the round and stage (``round 2 sweep``)."""


@dataclass
class DistillResult:
    """What :func:`self_distill` did: ``rounds.json``'s rows."""

    out: Path
    rounds: list[dict[str, Any]] = field(default_factory=list)
    """One row per round, in order (see docs/training.md for the keys)."""
    stopped: str | None = None
    """Why the loop stopped before ``rounds`` rounds (a round kept no run), else None."""
    seconds: float = 0.0


def round_dir(out: Path, n: int) -> Path:
    return Path(out) / f"round-{n}"


def self_distill(spec_path: Path, out: Path, rounds: int, *, workers: int | None = None,
                 progress: Progress | None = None) -> DistillResult:
    """Run (or continue) ``rounds`` rounds of sample → judge → select → SFT in ``out``."""
    if rounds < 1:
        raise ConfigError(f"--rounds must be at least 1, got {rounds}")
    started = time.perf_counter()
    spec = load_distill_spec(Path(spec_path))
    out = Path(out)
    _claim(out, spec, Path(spec_path))
    result = DistillResult(out)
    adapter = Path(spec.adapter) if spec.adapter else None
    for n in range(1, rounds + 2):
        def note(row: dict[str, Any]) -> None:
            _write_rounds(out, spec, [*result.rounds, row])

        row = _round(spec, out, n, adapter, last=n > rounds, workers=workers,
                     progress=progress, note=note)
        result.rounds.append(row)
        _write_rounds(out, spec, result.rounds)
        if row["stage"] == "stopped":
            result.stopped = row["why"]
            break
        adapter = round_dir(out, n) / "ckpt"
    result.seconds = round(time.perf_counter() - started, 3)
    return result


def _claim(out: Path, spec: DistillSpec, spec_path: Path) -> None:
    """Make ``out`` this loop's folder, or check that it already is."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file: give --out a folder")
    record = out / DISTILL_JSON
    now = json.loads(json.dumps(spec.to_dict()))
    if record.is_file():
        before = read_json(record, ConfigError, "").get("spec") or {}
        if isinstance(before.get("select"), dict):  # written before [select] reward
            before["select"] = {"reward": TOTAL, **before["select"]}
        differ = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
        if differ:
            raise ConfigError(f"{out} is a self-distillation of another spec (it differs in "
                              f"{', '.join(differ)}): give --out a new folder, or run the spec "
                              "it was made from; nothing was changed")
        return
    if out.is_dir() and any(out.iterdir()):
        raise ConfigError(f"{out} holds files and no {DISTILL_JSON}: give --out a new folder")
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(record, {"version": DISTILL_VERSION, "spec_file": str(spec_path.resolve()),
                               "created_at": _now(), "spec": now})


def _round(spec: DistillSpec, out: Path, n: int, adapter: Path | None, *, last: bool,
           workers: int | None, progress: Progress | None,
           note: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Bring round ``n`` to its end (its sweep only when ``last``), calling ``note(row)`` as
    each stage ends; its row."""
    folder = round_dir(out, n)
    data, ckpt = folder / "data", folder / "ckpt"
    root = spec.root(adapter.resolve() if adapter else None)
    row: dict[str, Any] = {"round": n, "root": root,
                           "adapter_from": str(adapter) if adapter else None, "stage": "sweep"}
    note(row)
    trained = _train_done(ckpt)
    exported = (data / "manifest.json").is_file()
    if not trained and not exported:
        _sweep(spec, folder, root, n, workers, progress)
    row.update(_sweep_figures(folder / "sweep"), stage="export")
    if last:
        row.update(stage="evaluated", why="the last checkpoint's pass rate (not trained)")
        return row
    if not row["judged"] and not trained and not exported:
        why = (f"no episode of round {n}'s sweep was judged (their errors: "
               f"{folder / 'sweep' / 'sweep.json'}); run the loop again to retry them")
        return {**row, "stage": "stopped", "why": why}
    note(row)
    if not trained and not exported:
        _export(spec, folder, n, progress)
    row.update(_export_figures(data), stage="train")
    if not row["rows"]:
        why = (f"round {n} kept no run to train on (see {data / 'manifest.json'}): lower "
               "[select] min_pass_rate or min_coverage, or sample more")
        return {**row, "stage": "stopped", "why": why}
    note(row)
    if not trained:
        _train(spec, data, ckpt, adapter, n, progress)
    return {**row, **_train_figures(ckpt), "stage": "done", "ckpt": str(ckpt)}


def _sweep(spec: DistillSpec, folder: Path, root: str, n: int, workers: int | None,
           progress: Progress | None) -> None:
    from dealroom.eval import run_sweep

    folder.mkdir(parents=True, exist_ok=True)
    toml = folder / "sweep.toml"
    text = (f"# round {n} of dealroom train self-distill: {root}\n"
            + to_toml({**spec.sweep, "roots": [root]}))
    if not toml.is_file() or toml.read_text(encoding="utf-8") != text:
        write_text_atomic(toml, text)
    report = (lambda s: progress(f"round {n} sweep", s.done + s.failed, s.total)) \
        if progress else None
    run_sweep(toml, folder / "sweep", workers=workers, retry_failed=True, progress=report)


def _export(spec: DistillSpec, folder: Path, n: int, progress: Progress | None) -> None:
    from dealroom.train._export import export_sft

    report = (lambda done, total: progress(f"round {n} export", done, total)) \
        if progress else None
    export_sft([folder / "sweep"], folder / "data", min_pass_rate=spec.min_pass_rate,
                        min_coverage=spec.min_coverage, top_k=spec.top_k,
                        room_median=spec.room_median, reward=spec.select.reward,
                        tokenizer=spec.model, max_length=spec.sft.max_length,
                        train_subs=spec.select.train_subs, progress=report)


def _train(spec: DistillSpec, data: Path, ckpt: Path, adapter: Path | None, n: int,
           progress: Progress | None) -> None:
    """Train (or resume training) round ``n``'s adapter; a folder with no checkpoint yet
    starts again."""
    from transformers.trainer_utils import get_last_checkpoint

    from dealroom.train._sft import train_sft

    resume = ckpt.is_dir() and get_last_checkpoint(str(ckpt)) is not None
    if ckpt.exists() and not resume:
        shutil.rmtree(ckpt)  # killed before its first checkpoint: nothing to keep
    report = (lambda step, total: progress(f"round {n} train", step, total)) \
        if progress else None
    train_sft(data, spec.model, ckpt, spec.sft, resume=resume, adapter=adapter, progress=report)


def _train_done(ckpt: Path) -> bool:
    from dealroom.models import TRAIN_RECORD

    record = ckpt / TRAIN_RECORD
    return record.is_file() and read_json(record, ConfigError, "").get("status") == "done"


# -- figures --------------------------------------------------------------------------------------


def _sweep_figures(sweep: Path) -> dict[str, Any]:
    """Episodes, failures and the means of pass rate, coverage and sub-calls of a sweep."""
    from dealroom.eval import load_rows

    rows = load_rows(sweep)
    done = [r for r in rows if r.status == "done" and not math.isnan(r.pass_rate)]

    def mean(values: list[float]) -> float | None:
        values = [v for v in values if not math.isnan(v)]
        return round(sum(values) / len(values), 4) if values else None

    return {"episodes": len(rows), "judged": len(done),
            "failed": sum(r.status == "failed" for r in rows),
            "pass_rate": mean([r.pass_rate for r in done]),
            "all_pass": mean([float(bool(r.all_pass)) for r in done]),
            "coverage": mean([r.coverage for r in done]),
            "sub_calls": mean([float(r.sub_calls) for r in done]),
            "sweep": str(sweep)}


def _export_figures(data: Path) -> dict[str, Any]:
    manifest = read_json(data / "manifest.json", ConfigError, "")
    totals = manifest.get("totals") or {}
    return {"kept": totals.get("kept", 0), "left_out": totals.get("left_out", {}),
            "rows": totals.get("rows", 0), "trained_tokens": totals.get("trained_tokens", 0),
            "data": str(data)}


def _train_figures(ckpt: Path) -> dict[str, Any]:
    from dealroom.models import TRAIN_RECORD

    record = read_json(ckpt / TRAIN_RECORD, ConfigError, "")
    log = ckpt / "log.jsonl"
    losses = [json.loads(line)["loss"] for line in log.read_text(encoding="utf-8").splitlines()
              if line.strip()] if log.is_file() else []
    return {"steps": record.get("steps"), "loss": losses[-1] if losses else None,
            "first_loss": losses[0] if losses else None}


def _write_rounds(out: Path, spec: DistillSpec, rows: list[dict[str, Any]]) -> None:
    write_json_atomic(out / ROUNDS_JSON, {"version": DISTILL_VERSION, "model": spec.model,
                                          "updated_at": _now(), "rounds": rows})


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
