"""SFT of ``hf:local`` on the scripted root's runs (a program distilled into the model), the
trained root against the untrained one and ``scripted`` on held-out rooms, then one round of
true self-distillation (the trained root's own best runs).

    python benchmarks/bench_sft.py [--rooms 20] [--holdout 10] [--max-steps 60]
        [--max-turns 8] [--max-tokens 768] [--distill-rooms 4] [--samples 2]
        [--distill-steps 20] [--distill-temperature 0.7] [--work DIR]
        [--model hf:local,threads=2]

1. Generates ``--rooms`` training rooms and ``--holdout`` held-out rooms of 20-60 documents
   (sizes spread evenly, distinct seeds).
2. Runs ``scripted`` with the ``oracle`` sub-agent on the training rooms (a sweep), exports
   the runs (``export_sft``, best run per room) and trains a LoRA adapter on them
   (``train_sft``); each in its own process, so its wall time and peak RSS are its own.
3. Runs the trained root, the untrained model and ``scripted`` with ``oracle`` subs on the
   held-out rooms (one sweep) and prints, per root: the share of root turns whose code ran
   without error (a turn with no code block counts as not), coverage, criteria pass rate,
   sub-calls, and the Pearson correlation of sub-calls with room size in documents.
4. One round of ``self_distill`` from the trained adapter on the first ``--distill-rooms``
   training rooms: ``--samples`` runs per room sampled at ``--distill-temperature``, the best
   per room kept, ``--distill-steps`` more steps on that adapter, then the new adapter sampled
   the same way; prints the pass rate before and after.

Everything lands in ``--work`` (default ``bench-sft/``); sweeps, exports and trainings resume,
so a killed benchmark continues where it stopped. Figures are also written to
``WORK/results.json``. ``hf:`` generation on a shared 2-core CPU runs at a few tokens per
second: scale it with the flags.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import resource
import time
from pathlib import Path
from typing import Any

SECRET = "bench-sft"


def _toml(table: dict[str, Any]) -> str:
    from dealroom.train._distill_spec import to_toml

    return to_toml(table)


def rooms(work: Path, n: int, first_seed: int, kind: str) -> list[Path]:
    """``n`` generated rooms of 20-60 documents, sizes spread evenly."""
    from dealroom.room import generate_room

    out = []
    for i in range(n):
        docs = 20 + round(40 * i / max(1, n - 1))
        path = work / "rooms" / f"{kind}-{i:02d}-d{docs}"
        if not (path / "room.json").is_file():
            generate_room(path, docs=docs, seed=first_seed + i, secret=SECRET)
        out.append(path)
    return out


def sweep(work: Path, name: str, room_paths: list[Path], roots: list[str], turns: int,
          workers: int) -> Path:
    from dealroom.eval import run_sweep

    spec = work / f"{name}.toml"
    spec.write_text(_toml({"rooms": [str(p) for p in room_paths], "roots": roots,
                           "subs": ["oracle"], "max_turns": [turns], "samples": 1}))
    out = work / name
    started = time.perf_counter()
    result = run_sweep(spec, out, workers=workers,
                       progress=lambda s: print(f"  {name}: {s.done + s.failed}/{s.total}",
                                                flush=True))
    print(f"  {name}: {result.done} done, {result.failed} failed, "
          f"{time.perf_counter() - started:,.0f} s", flush=True)
    return out


def _child(queue: Any, fn: Any, args: tuple[Any, ...], parent: int) -> None:
    import torch

    from dealroom.eval._executor import die_with_parent

    die_with_parent(parent)  # a killed benchmark leaves no training running on
    torch.set_num_threads(2)
    started = time.perf_counter()
    value = fn(*args)
    queue.put({"seconds": time.perf_counter() - started, "value": value,
               "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def in_child(fn: Any, *args: Any) -> dict[str, Any]:
    """``fn(*args)`` in a fresh process: its value, wall time and peak RSS."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(queue, fn, args, os.getpid()))
    process.start()
    result = queue.get()
    process.join()
    return result


def export(sweep_dir: str, out: str, model: str, max_length: int) -> dict[str, Any]:
    from dealroom.train import export_sft

    if (Path(out) / "manifest.json").is_file():  # a rerun: not measured again
        return {**json.loads((Path(out) / "manifest.json").read_text())["totals"],
                "reused": True}
    result = export_sft([Path(sweep_dir)], Path(out), top_k=1, tokenizer=model,
                        max_length=max_length)
    return {"kept": result.kept, "rows": result.rows, "tokens": result.tokens,
            "trained_tokens": result.trained_tokens}


def train(data: str, model: str, out: str, settings: dict[str, Any]) -> dict[str, Any]:
    from transformers.trainer_utils import get_last_checkpoint

    from dealroom.train import SFTSettings, train_sft

    record = Path(out) / "train.json"
    if record.is_file() and json.loads(record.read_text()).get("status") == "done":
        return {"steps": json.loads(record.read_text())["steps"], "loss": None, "reused": True}
    resume = Path(out).is_dir() and get_last_checkpoint(out) is not None
    result = train_sft(Path(data), model, Path(out), SFTSettings(**settings), resume=resume)
    return {"steps": result.steps, "loss": result.loss, "rows": result.rows}


# -- figures -------------------------------------------------------------------------------------


def turns_without_error(run: Path) -> tuple[int, int]:
    """(root turns whose cells all ran without error, root turns) of one run."""
    from dealroom.runs import RunFolder

    events = RunFolder(run).events()
    turns = {e["turn"] for e in events if e.get("type") == "model_call"
             and e.get("agent") == "root" and e.get("role") == "root"}
    bad, ran = set(), set()
    for e in events:
        if e.get("type") == "cell" and e.get("agent") == "root":
            ran.add(e["turn"])
            if e.get("error") or e.get("timed_out") or e.get("crashed"):
                bad.add(e["turn"])
    return len((ran - bad) & turns), len(turns)


def figures(sweep_dir: Path) -> dict[str, dict[str, Any]]:
    """Per root of a sweep: turns without error, coverage, pass rate, sub-calls, delegation."""
    from dealroom.eval import load_rows
    from dealroom.measure import correlation

    by_root: dict[str, list[Any]] = {}
    for row in load_rows(sweep_dir):
        by_root.setdefault(row.root, []).append(row)
    out = {}
    for root, rows in by_root.items():
        done = [r for r in rows if r.status == "done" and not math.isnan(r.pass_rate)]
        ok = total = 0
        for r in done:
            good, turns = turns_without_error(Path(r.run))
            ok, total = ok + good, total + turns
        out[root] = {
            "episodes": len(rows), "judged": len(done),
            "turns_ok": ok / total if total else math.nan, "turns": total,
            "coverage": _mean([r.coverage for r in done]),
            "pass_rate": _mean([r.pass_rate for r in done]),
            "sub_calls": _mean([float(r.sub_calls) for r in done]),
            "delegation_r": correlation([r.sub_calls for r in done], [r.docs for r in done])
            if len(done) > 2 else math.nan,
        }
    return out


def _mean(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else math.nan


def _pct(value: float) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.1%}"


def _num(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def print_table(table: dict[str, dict[str, Any]], names: dict[str, str]) -> None:
    head = (f"{'root':<18}{'episodes':>9}{'turns ok':>10}{'coverage':>10}{'pass rate':>11}"
            f"{'sub-calls':>11}{'r(sub,docs)':>13}")
    print(head)
    print("-" * len(head))
    for root, f in table.items():
        print(f"{names.get(root, root)[:17]:<18}{f['judged']:>4}/{f['episodes']:<4}"
              f"{_pct(f['turns_ok']):>10}{_pct(f['coverage']):>10}{_pct(f['pass_rate']):>11}"
              f"{_num(f['sub_calls'], 1):>11}{_num(f['delegation_r']):>13}")


# -- the benchmark ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=20, help="training rooms (default 20)")
    parser.add_argument("--holdout", type=int, default=10, help="held-out rooms (default 10)")
    parser.add_argument("--max-steps", type=int, default=60, help="SFT steps (default 60)")
    parser.add_argument("--max-turns", type=int, default=8, help="turn budget T (default 8)")
    parser.add_argument("--max-tokens", type=int, default=768,
                        help="longest hf: reply in tokens (default 768)")
    parser.add_argument("--max-length", type=int, default=4096,
                        help="longest training row in tokens (default 4096)")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="default 1e-3")
    parser.add_argument("--distill-rooms", type=int, default=4,
                        help="training rooms the self-distillation round samples (default 4)")
    parser.add_argument("--samples", type=int, default=2,
                        help="self-distillation runs per room (default 2)")
    parser.add_argument("--distill-steps", type=int, default=20,
                        help="self-distillation SFT steps (default 20)")
    parser.add_argument("--distill-temperature", type=float, default=0.7,
                        help="the root's sampling temperature in self-distillation (default "
                             "0.7; at 0 the samples of a room are one run repeated)")
    parser.add_argument("--work", type=Path, default=Path("bench-sft"), help="working folder")
    parser.add_argument("--model", default="hf:local,threads=2", help="the hf: base model")
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}

    def save() -> None:
        (work / "results.json").write_text(json.dumps(results, indent=1))

    started = time.perf_counter()

    print("rooms", flush=True)
    train_rooms = rooms(work, args.rooms, 1, "train")
    held = rooms(work, args.holdout, 1000, "holdout")
    print("scripted runs on the training rooms", flush=True)
    scripted = sweep(work, "scripted", train_rooms, ["scripted"], args.max_turns, 2)

    print("export", flush=True)
    results["export"] = in_child(export, str(scripted), str(work / "DS"), args.model,
                                 args.max_length)
    print(f"  {results['export']}", flush=True)
    save()
    print("train", flush=True)
    sft = {"max_steps": args.max_steps, "max_length": args.max_length, "grad_accum": 1,
           "learning_rate": args.learning_rate, "save_steps": 10}
    ckpt = work / "CKPT"
    results["train"] = in_child(train, str(work / "DS"), args.model, str(ckpt), sft)
    print(f"  {results['train']}", flush=True)
    save()

    generation = f"{args.model},max_tokens={args.max_tokens}"
    trained = f"{generation},adapter={ckpt}"
    names = {trained: "hf:local + SFT", generation: "hf:local", "scripted": "scripted"}
    print("held-out rooms: trained, untrained, scripted", flush=True)
    held_sweep = sweep(work, "holdout", held, [trained, generation, "scripted"],
                       args.max_turns, 1)
    results["holdout"] = figures(held_sweep)
    save()

    print("one round of self-distillation from the trained adapter", flush=True)
    results["self_distill"] = distill_round(work, args, train_rooms[:args.distill_rooms],
                                            generation, ckpt)
    save()
    results["seconds"] = time.perf_counter() - started
    save()
    report(results, names, args)


def distill_round(work: Path, args: Any, room_paths: list[Path], generation: str,
                  ckpt: Path) -> list[dict[str, Any]]:
    from dealroom.train import self_distill

    spec = work / "distill.toml"
    spec.write_text(_toml({"model": generation, "adapter": str(ckpt),
                           "rooms": [str(p) for p in room_paths], "subs": ["oracle"],
                           "max_turns": [args.max_turns], "samples": args.samples,
                           "settings": {"temperature": args.distill_temperature}})
                    + "[select]\ntop_k = 1\n[sft]\n"
                    + _toml({"max_steps": args.distill_steps, "max_length": args.max_length,
                             "grad_accum": 1, "learning_rate": args.learning_rate,
                             "save_steps": 10}))
    result = self_distill(spec, work / "distill", 1, workers=1,
                          progress=lambda what, done, total: print(f"  {what}: {done}/{total}",
                                                                   flush=True))
    return result.rounds


def report(results: dict[str, Any], names: dict[str, str], args: Any) -> None:
    """The figures; an export or training reused from an earlier run says so (its time and
    memory are then not measurements)."""
    export, train = results["export"], results["train"]
    print(f"\nexport: {export['seconds']:,.1f} s, peak RSS {export['peak_rss_mb']:,.0f} MB "
          f"({export['value']})")
    print(f"train:  {train['seconds']:,.1f} s, peak RSS {train['peak_rss_mb']:,.0f} MB "
          f"({train['value']})\n")
    print(f"held-out rooms ({args.holdout}), T={args.max_turns}, oracle sub-agents:")
    print_table(results["holdout"], names)
    table = results["holdout"]
    trained = next(f for r, f in table.items() if names.get(r) == "hf:local + SFT")
    scripted = table["scripted"]
    print(f"\nfloors: trained root turns without error {_pct(trained['turns_ok'])} "
          f"(>= 80%: {'met' if trained['turns_ok'] >= 0.8 else 'not met'}); pass rate "
          f"{_pct(trained['pass_rate'])} vs scripted {_pct(scripted['pass_rate'])} (>= half: "
          f"{'met' if trained['pass_rate'] >= scripted['pass_rate'] / 2 else 'not met'})")
    rounds = results["self_distill"]
    print("\nself-distillation (pass rate on the rooms it sampled):")
    for row in rounds:
        print(f"  round {row['round']} ({'trained root' if row['round'] == 1 else 'after'}): "
              f"pass rate {_pct(row.get('pass_rate'))}, coverage {_pct(row.get('coverage'))}, "
              f"kept {row.get('kept', '-')}, steps {row.get('steps', '-')}")
    if len(rounds) == 2 and rounds[0].get("pass_rate") is not None \
            and rounds[1].get("pass_rate") is not None:
        delta = rounds[1]["pass_rate"] - rounds[0]["pass_rate"]
        print(f"  moved the pass rate by {delta:+.1%}")
    print(f"\ntotal {results['seconds']:,.0f} s; figures in {args.work / 'results.json'}")


if __name__ == "__main__":
    main()
