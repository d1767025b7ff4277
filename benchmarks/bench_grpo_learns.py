"""Whether GRPO raises the root's score: a starting policy with room to improve, GRPO for as
many steps as fit in ``--minutes``, then the trained and the starting policy on held-out rooms.

    python benchmarks/bench_grpo_learns.py [--minutes 90] [--out bench-grpo-learns]
        [--model hf:local,threads=2] [--train-rooms 6] [--heldout 6] [--docs 8]
        [--programs 1.0,0.5,0.2] [--sft-steps 40] [--group 4] [--groups 2] [--turns 6]
        [--tokens 1536] [--temperature 0.6] [--eval-samples 2] [--family scripted|compact]
        [--quick]

1. rooms: ``--train-rooms`` generated training rooms and ``--heldout`` held-out ones (other
   seeds) of ``--docs`` documents;
2. the starting policy: the ``scripted`` programs of ``--programs`` coverages (``scripted``,
   ``scripted:coverage=0.5``, ...) with ``oracle`` sub-agents on the training rooms, every run
   exported (``export_sft``, no bar, no room median) and the model SFT-trained on them for
   ``--sft-steps`` steps (``train_sft``): it has seen programs that delegate different shares
   of the room, so its samples differ and a group's rewards can too;
3. GRPO (``train_grpo``, dealroom's engine) from that checkpoint with frozen ``oracle``
   sub-agents and the reference judge on the training rooms: groups of ``--group``,
   ``--groups`` groups a step, a checkpoint every step, until the next step (at the mean step
   time so far) would pass ``--minutes`` of step time or ``--max-steps`` are done;
4. the starting policy (the SFT checkpoint), the trained one (the last GRPO checkpoint) and
   ``scripted`` (the program at full coverage: a ceiling) on the held-out rooms, ``--eval-
   samples`` samples a room at the rollout temperature (one sweep): pass rate and coverage per
   policy with 95% bootstrap intervals over rooms (``dealroom.eval.bootstrap_ci``), and the
   trained-minus-start difference paired by room (interval and sign test).

Everything lands in ``--out``: ``results.json`` (rewritten after every stage and every GRPO
step: the arguments, each stage's figures, the reward curve, the evaluation, the load average)
and ``grpo_learns.png`` (the reward per step; pass rate and coverage per policy). The sweeps,
the export, the SFT and GRPO (its own ``--resume``) continue where a killed run stopped: run
the same command again; a larger ``--minutes`` or ``--max-steps`` trains on from the last
checkpoint. Nothing here tunes toward a rise: the figures are what the run gives.

The scale: the scripted program scores only from 6 turns on (at 5 or fewer it has not
delegated yet: pass rate 0 on 6-document rooms, 0.667 at 6 turns, 0.167 with coverage 0.3),
and its longest cell is 1,469 tokens of ``hf:local``'s tokenizer, hence the defaults ``--turns
6 --tokens 1536``: about 4,000 root tokens an episode. ``--quick`` (2 + 2 rooms, groups of 2,
3 turns of 128 tokens, 4 SFT steps, 5 minutes) runs every stage in minutes, not hours, on a
CPU; at its 3 turns no policy, scripted included, can pass a criterion: it checks the
plumbing, not learning.

``--family compact`` is the scale a CPU allows: the start is SFT-trained on three one-cell
programs (:data:`COMPACT`: a memo in the rubric's three sections, a plain list of findings,
nothing read; 117 / 57 / 16 tokens), and rollouts get 2 turns of 256 tokens, so a GRPO step is
minutes, not half an hour. What GRPO can learn there is to write the better program more
often; the held-out figures say whether it did.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import time
from pathlib import Path
from typing import Any

SECRET = "bench-grpo-learns"
SPEC_STEPS = 100_000
"""The GRPO spec's ``steps``: never reached, the budget stops training (and a resume with
another ``--minutes`` keeps the spec the same)."""
QUICK = {"train_rooms": 2, "heldout": 2, "docs": 6, "programs": "1.0,0.3", "sft_steps": 4,
         "max_length": 2048, "minutes": 5.0, "group": 2, "groups": 1, "turns": 3,
         "tokens": 128, "eval_samples": 1}
COMPACT = {
    "full": ('```python\nr = llm_batch([{"prompt": "List each finding: the issue, the amount at '
             'risk, the consent or notice needed.", "docs": [d.id]} for d in room.docs])\n'
             'found = "\\n".join(str(x) for x in r)\n'
             'memo.section("Executive Summary", found[:300])\n'
             'memo.section("Key Findings", found)\n'
             'memo.section("Recommended Next Steps", "Obtain each consent and give each notice '
             'above.")\nsubmit()\n```'),
    "plain": ('```python\nr = llm_batch([{"prompt": "List each finding.", "docs": [d.id]} '
              'for d in room.docs])\nmemo.write("\\n".join(str(x) for x in r))\nsubmit()\n```'),
    "none": '```python\nmemo.write("No findings.")\nsubmit()\n```',
}
"""``--family compact``: three one-cell programs of 15-90 tokens, from a memo in the three
sections the rubric asks for (about 0.7 of the criteria on generated rooms) through a plain
list of the sub-agents' findings (about 0.55) to nothing read (0)."""
COMPACT_DEFAULTS = {"turns": 2, "tokens": 256, "sft_steps": 20, "max_length": 4096}
CURVE = ("step", "reward_mean", "reward_std", "pass_rate", "coverage", "groups",
         "groups_dropped", "crashed", "loss", "root_tokens", "rollout_s", "train_s", "step_s")
PLOT = "grpo_learns.png"


class BudgetSpent(Exception):
    """Raised after a GRPO step when the next one would not fit the budget."""


# -- arguments ---------------------------------------------------------------------------------


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The benchmark's arguments; ``--quick`` changes the defaults to :data:`QUICK`."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    add = parser.add_argument
    add("--out", type=Path, default=Path("bench-grpo-learns"), help="the working folder")
    add("--model", default="hf:local,threads=2", help="the hf: base model, with its options")
    add("--minutes", type=float, default=90.0, help="GRPO step time to spend (default 90)")
    add("--max-steps", type=int, default=SPEC_STEPS, help="GRPO steps at most")
    add("--train-rooms", type=int, default=6)
    add("--heldout", type=int, default=6)
    add("--docs", type=int, default=8, help="documents per generated room")
    add("--programs", default="1.0,0.5,0.2",
        help="coverages of the scripted programs the start is SFT-trained on")
    add("--sft-steps", type=int, default=40)
    add("--sft-lr", type=float, default=1e-3)
    add("--max-length", type=int, default=4096, help="longest SFT row in tokens")
    add("--group", type=int, default=4, help="G: rollouts per group")
    add("--groups", type=int, default=2, help="groups trained on per step")
    add("--extra-groups", type=int, default=1)
    add("--turns", type=int, default=6, help="turn budget of rollouts and evaluation")
    add("--tokens", type=int, default=1536, help="longest root reply in tokens")
    add("--temperature", type=float, default=0.6, help="rollout and evaluation temperature")
    add("--lr", type=float, default=1e-5, help="GRPO learning rate")
    add("--eval-samples", type=int, default=2, help="samples per held-out room and policy")
    add("--seed", type=int, default=0)
    add("--family", choices=("scripted", "compact"), default="scripted",
        help="the start's programs: dealroom's scripted root at --programs coverages, or the "
             "three one-cell programs of COMPACT (--programs ignored; defaults 2 turns x 256 "
             "tokens, 20 SFT steps)")
    add("--quick", action="store_true", help="a small configuration of every stage")
    first, _ = parser.parse_known_args(argv)
    if first.family == "compact":
        parser.set_defaults(**COMPACT_DEFAULTS)
    if first.quick:
        parser.set_defaults(**QUICK)
    args = parser.parse_args(argv)
    for name in ("train_rooms", "heldout", "docs", "sft_steps", "groups", "turns", "tokens",
                 "eval_samples", "max_steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.minutes <= 0 or args.group < 2:
        parser.error("--minutes must be positive and --group at least 2")
    args.coverages = [float(c) for c in args.programs.split(",") if c.strip()]
    if not args.coverages or not all(0 < c <= 1 for c in args.coverages):
        parser.error("--programs: coverages in (0, 1], comma-separated")
    return args


def split_model(model: str) -> tuple[str, str]:
    """``("hf:PATH", ",opt=v,...")`` of an ``hf:`` spec.

    >>> split_model("hf:local,threads=2")
    ('hf:local', ',threads=2')
    """
    if not model.startswith("hf:"):
        raise SystemExit(f"--model must be an hf: model, got {model!r}")
    base, _, options = model.partition(",")
    return base, f",{options}" if options else ""


def program(coverage: float) -> str:
    return "scripted" if coverage >= 1.0 else f"scripted:coverage={coverage:g}"


# -- stages ------------------------------------------------------------------------------------


def make_rooms(out: Path, args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The training and held-out rooms (generated once; distinct seeds)."""
    from dealroom.room import generate_room

    def room(kind: str, index: int, seed: int) -> str:
        path = out / "rooms" / f"{kind}-{index:02d}"
        if not (path / "room.json").is_file():
            generate_room(path, docs=args.docs, seed=seed, secret=SECRET)
        return str(path.resolve())

    return ([room("train", i, 1 + i) for i in range(args.train_rooms)],
            [room("heldout", i, 1000 + i) for i in range(args.heldout)])


def sweep(out: Path, name: str, body: dict[str, Any]) -> Path:
    """Run (or continue) the sweep ``body`` into ``out/name``, one episode at a time."""
    from dealroom.eval import run_sweep
    from dealroom.train._distill_spec import to_toml

    spec = out / f"{name}.toml"
    spec.write_text(to_toml({"subs": ["oracle"], "judge": "reference", **body}))
    result = run_sweep(spec, out / name, workers=1, progress=lambda s: print(
        f"  {name}: {s.done + s.failed}/{s.total}", flush=True))
    if result.failed:
        print(f"  {name}: {result.failed} episodes failed", flush=True)
    return out / name


def start_policy(out: Path, args: argparse.Namespace, rooms: list[str]) -> dict[str, Any]:
    """The scripted programs' runs, their export and the SFT checkpoint ``out/sft``."""
    from transformers.trainer_utils import get_last_checkpoint

    from dealroom.train import SFTSettings, export_sft, train_sft

    if args.family == "compact":
        programs = compact_runs(out / "programs", rooms, args.turns)
        figures = {"programs": compact_figures(programs)}
    else:
        programs = sweep(out, "programs", {"rooms": rooms, "max_turns": [args.turns],
                                           "roots": [program(c) for c in args.coverages]})
        figures = {"programs": policy_figures(programs)}
    data, ckpt = out / "sft-data", out / "sft"
    if not (data / "manifest.json").is_file():
        exported = export_sft([programs], data, room_median=False, tokenizer=args.model,
                              max_length=args.max_length)
        figures["export"] = {"kept": exported.kept, "rows": exported.rows,
                             "tokens": exported.tokens}
    record = ckpt / "train.json"
    if not (record.is_file() and json.loads(record.read_text()).get("status") == "done"):
        settings = SFTSettings(max_steps=args.sft_steps, max_length=args.max_length,
                               grad_accum=1, learning_rate=args.sft_lr, save_steps=5,
                               seed=args.seed)
        resume = ckpt.is_dir() and get_last_checkpoint(str(ckpt)) is not None
        result = train_sft(data, args.model, ckpt, settings, resume=resume)
        figures["sft"] = {"steps": result.steps, "loss": result.loss,
                          "seconds": round(result.seconds, 1)}
    return figures


def compact_runs(folder: Path, rooms: list[str], turns: int) -> Path:
    """Each :data:`COMPACT` program on each room with ``oracle`` sub-agents, judged
    (``folder/ROOM-NAME``; a run already judged is kept)."""
    from dealroom.harness import run_agent
    from dealroom.judge import judge_run
    from dealroom.testing import ScriptedModel

    for room in rooms:
        for name, cell in COMPACT.items():
            run = folder / f"{Path(room).name}-{name}"
            if (run / "scores.json").is_file():
                continue
            if run.exists():
                shutil.rmtree(run)
            run_agent(room, run, root=ScriptedModel([cell]), sub="oracle", max_turns=turns)
            judge_run(run, "reference")
    return folder


def compact_figures(folder: Path) -> dict[str, dict[str, Any]]:
    """Per compact program: runs, and its pass rate (mean over rooms, 95% interval)."""
    from dealroom.eval import bootstrap_ci

    out: dict[str, dict[str, Any]] = {}
    for name in COMPACT:
        rates = [json.loads(p.read_text())["pass_rate"]
                 for p in sorted(folder.glob(f"*-{name}/scores.json"))]
        out[name] = {"episodes": len(rates), "pass_rate": _ci(bootstrap_ci(rates)),
                     "coverage": None}
    return out


def grpo_spec(args: argparse.Namespace, start: str, rooms: list[str]) -> Any:
    from dealroom.train._grpo_settings import spec_from_dict

    batch = args.group * args.groups
    return spec_from_dict({
        "model": start, "rooms": rooms, "sub": "oracle", "judge": "reference",
        "grpo": {"group_size": args.group, "batch_size": batch, "steps": SPEC_STEPS,
                 "extra_groups": args.extra_groups, "max_turns": args.turns,
                 "max_new_tokens": args.tokens, "temperature": args.temperature,
                 "learning_rate": args.lr, "save_every": 1, "seed": args.seed,
                 "rollout_batch": batch}})


def should_stop(rows: list[dict[str, Any]], args: argparse.Namespace) -> bool:
    """Whether training stops after ``rows``: ``--max-steps`` done, or the next step, at the
    mean step time so far, would take the step time past ``--minutes`` (never before a step).

    >>> a = argparse.Namespace(minutes=1.0, max_steps=5)
    >>> should_stop([], a), should_stop([{"step_s": 20.0}], a), should_stop([{"step_s": 31.0}], a)
    (False, False, True)
    """
    if not rows:
        return False
    spent = sum(float(r.get("step_s") or 0.0) for r in rows)
    return len(rows) >= args.max_steps or spent + spent / len(rows) > args.minutes * 60


def train(out: Path, args: argparse.Namespace, start: str, rooms: list[str],
          save: Any) -> dict[str, Any]:
    """GRPO into ``out/grpo`` until :func:`should_stop`, resuming a run there."""
    from dealroom.runs import read_jsonl
    from dealroom.train import train_grpo
    from dealroom.train._grpo import last_checkpoint

    ckpt = out / "grpo"
    log = ckpt / "log.jsonl"

    def rows() -> list[dict[str, Any]]:
        return list(read_jsonl(log)) if log.is_file() else []

    # a training there resumes (train_grpo's own resume), from step 0 when it was killed
    # before its first checkpoint: the rollouts that step finished are kept
    resumed = last_checkpoint(ckpt) if (ckpt / "train.json").is_file() else None
    stopped = "spec"
    if not should_stop(rows()[:resumed], args):
        def progress(step: int, _: int) -> None:
            done = rows()
            print("  step " + ", ".join(f"{k}={_fmt(done[-1].get(k))}" for k in CURVE[1:]),
                  f"(step {step})", flush=True)
            save({"curve": curve(done)})
            if should_stop(done, args):
                raise BudgetSpent

        with contextlib.suppress(BudgetSpent):
            train_grpo(grpo_spec(args, start, rooms), ckpt, resume=resumed is not None,
                       progress=progress)
    done = rows()
    if len(done) < SPEC_STEPS:
        stopped = "max_steps" if len(done) >= args.max_steps else "minutes"
    return {"steps": len(done), "checkpoint": str(ckpt / f"checkpoint-{last_checkpoint(ckpt)}"),
            "resumed_from": resumed, "stopped_by": stopped, "curve": curve(done),
            "step_s": round(sum(r["step_s"] for r in done), 1),
            "updates": sum(r.get("loss") is not None for r in done)}


def curve(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: r.get(k) for k in CURVE} for r in rows]


def evaluate(out: Path, args: argparse.Namespace, roots: dict[str, str], rooms: list[str],
             step: int) -> dict[str, Any]:
    """The policies ``roots`` (name → root spec) on the held-out rooms, one sweep per trained
    step (a later, longer training is evaluated afresh)."""
    folder = sweep(out, f"eval-step-{step}", {
        "rooms": rooms, "roots": list(roots.values()), "max_turns": [args.turns],
        "samples": args.eval_samples, "settings": {"temperature": args.temperature}})
    figures = policy_figures(folder)
    named = {name: figures.get(root, {}) for name, root in roots.items()}
    named["trained - start"] = paired(folder, roots["trained"], roots["start"])
    return named


def room_means(folder: Path, root: str, key: str) -> dict[str, float]:
    """Room → the mean of ``key`` over ``root``'s judged episodes there."""
    from dealroom.eval import load_rows

    values: dict[str, list[float]] = {}
    for row in load_rows(folder):
        value = getattr(row, key)
        if row.root == root and row.status == "done" and not math.isnan(value):
            values.setdefault(row.room, []).append(value)
    return {room: sum(v) / len(v) for room, v in values.items()}


def policy_figures(folder: Path) -> dict[str, dict[str, Any]]:
    """Per root of a sweep: episodes, judged, and pass rate and coverage as (mean over rooms,
    95% bootstrap interval over rooms)."""
    from dealroom.eval import bootstrap_ci, load_rows

    rows = load_rows(folder)
    out: dict[str, dict[str, Any]] = {}
    for root in dict.fromkeys(r.root for r in rows):
        mine = [r for r in rows if r.root == root]
        out[root] = {"episodes": len(mine),
                     "judged": sum(r.status == "done" and not math.isnan(r.pass_rate)
                                   for r in mine)}
        for key in ("pass_rate", "coverage"):
            means = room_means(folder, root, key)
            out[root][key] = _ci(bootstrap_ci(list(means.values())))
            out[root]["rooms"] = max(out[root].get("rooms", 0), len(means))
    return out


def paired(folder: Path, trained: str, start: str) -> dict[str, Any]:
    """Trained minus start per room (rooms both were judged on): the mean difference of pass
    rate and of coverage with its bootstrap interval over rooms, and the sign test's p."""
    from dealroom.eval import bootstrap_ci, sign_test

    figures: dict[str, Any] = {}
    for key in ("pass_rate", "coverage"):
        a, b = room_means(folder, trained, key), room_means(folder, start, key)
        diffs = [a[room] - b[room] for room in sorted(set(a) & set(b))]
        figures[key] = _ci(bootstrap_ci(diffs))
        figures[f"{key}_sign_p"] = sign_test(diffs) if diffs else None
        figures["rooms"] = len(diffs)
    return figures


def _ci(triple: tuple[float, float, float]) -> list[float | None]:
    return [None if math.isnan(x) else round(x, 4) for x in triple]


# -- the run -----------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every stage in turn, each skipped where ``--out`` already holds it; the results."""
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    results: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    results.update(args={k: v for k, v in vars(args).items() if k != "out"} | {"out": str(out)},
                   load_start=os.getloadavg(), started=time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                     time.gmtime()))

    def save(update: dict[str, Any]) -> None:
        results.update(update)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(results, indent=1, default=str))
        tmp.replace(path)

    base, options = split_model(args.model)
    clock = time.perf_counter()
    print("rooms", flush=True)
    train_rooms, heldout = make_rooms(out, args)
    save({"rooms": {"train": train_rooms, "heldout": heldout}})
    print(f"the starting policy: {args.family} programs, export, SFT", flush=True)
    save({"start_policy": {**results.get("start_policy", {}),
                           **start_policy(out, args, train_rooms)}})
    start = f"hf:{out / 'sft'}{options}"
    print(f"GRPO from {start} for up to {args.minutes:g} minutes of steps", flush=True)
    grpo = train(out, args, start, train_rooms, save)
    save({"grpo": grpo, "curve": grpo["curve"]})
    print(f"held-out rooms: start, trained (step {grpo['steps']}), scripted", flush=True)
    roots = {"start": f"{start},max_tokens={args.tokens}",
             "trained": f"hf:{grpo['checkpoint']}{options},max_tokens={args.tokens}"}
    if args.family == "scripted":  # the ceiling (a compact run's are its programs' figures)
        roots["scripted"] = "scripted"
    save({"roots": roots, "evaluation": evaluate(out, args, roots, heldout, grpo["steps"]),
          "load_end": os.getloadavg(), "seconds": round(time.perf_counter() - clock, 1)})
    save({"plot": str(out / PLOT) if plot(results, out / PLOT) else None})
    report(results, base)
    return results


def plot(results: dict[str, Any], path: Path) -> bool:
    """The reward per step (mean ± sd, and pass rate) and each policy's held-out pass rate
    and coverage with their intervals, as a PNG; False (and a note) without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        print("no PNG: matplotlib is not installed (pip install matplotlib); the figures are "
              "in results.json", flush=True)
        return False

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    rows = results["curve"]
    steps = [r["step"] for r in rows]
    mean = [_nan(r["reward_mean"]) for r in rows]
    left.errorbar(steps, mean, yerr=[_nan(r["reward_std"]) for r in rows], marker="o",
                  capsize=3, label="reward (mean ± sd)")
    left.plot(steps, [_nan(r["pass_rate"]) for r in rows], "s--", label="pass rate")
    left.set(xlabel="GRPO step", ylabel="training rollouts", ylim=(0, 1),
             title="reward per step")
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.legend(loc="lower right")
    evaluation = results["evaluation"]
    names = [n for n in ("start", "trained", "scripted") if n in evaluation]
    for k, key in enumerate(("pass_rate", "coverage")):
        values = [evaluation[n].get(key) or [None, None, None] for n in names]
        heights = [_nan(v[0]) for v in values]
        errors = [[max(0.0, _nan(v[0]) - _nan(v[1])) if v[1] is not None else 0 for v in values],
                  [max(0.0, _nan(v[2]) - _nan(v[0])) if v[2] is not None else 0 for v in values]]
        right.bar([i + 0.38 * k for i in range(len(names))], heights, width=0.36,
                  yerr=errors, capsize=3, label=key.replace("_", " "))
    right.set_xticks([i + 0.19 for i in range(len(names))], names)
    right.set(ylim=(0, 1.05), title=f"held-out rooms ({len(results['rooms']['heldout'])}), "
                                    "95% intervals over rooms")
    right.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def report(results: dict[str, Any], base: str) -> None:
    """Every figure, printed."""
    start = results["start_policy"]
    print("\nthe programs on the training rooms: "
          + "; ".join(f"{root}: pass {_interval(f['pass_rate'])}, coverage "
                      f"{_interval(f['coverage'])}" for root, f in start["programs"].items()))
    if "export" in start:
        print(f"export: {start['export']}")
    if "sft" in start:
        print(f"SFT of {base}: {start['sft']}")
    grpo = results["grpo"]
    resumed = ("" if grpo["resumed_from"] is None
               else f", resumed from step {grpo['resumed_from']}")
    print(f"\nGRPO: {grpo['steps']} steps ({grpo['updates']} with an update), "
          f"{grpo['step_s']:,.0f} s of step time, stopped by {grpo['stopped_by']}{resumed}")
    print("  " + "  ".join(f"{k:>14}" for k in CURVE))
    for row in grpo["curve"]:
        print("  " + "  ".join(f"{_fmt(row[k]):>14}" for k in CURVE))
    evaluation = results["evaluation"]
    print(f"\nheld-out rooms ({len(results['rooms']['heldout'])}), "
          f"{results['args']['eval_samples']} sample(s) each, T={results['args']['turns']}:")
    for name in (n for n in ("start", "trained", "scripted") if n in evaluation):
        f = evaluation[name]
        print(f"  {name:<9} judged {f.get('judged', 0)}/{f.get('episodes', 0)}  pass rate "
              f"{_interval(f.get('pass_rate'))}  coverage {_interval(f.get('coverage'))}")
    diff = evaluation["trained - start"]
    print(f"  trained - start over {diff['rooms']} rooms: pass rate "
          f"{_interval(diff['pass_rate'])} (sign test p {_fmt(diff['pass_rate_sign_p'])}), "
          f"coverage {_interval(diff['coverage'])}")
    print(f"\nload average {results['load_start']} at the start, {results['load_end']} at the "
          f"end; {results['seconds']:,.0f} s; figures in {results['args']['out']}")


def _interval(value: list[float | None] | None) -> str:
    if not value or value[0] is None:
        return "n/a"
    if value[1] is None:
        return f"{value[0]:.3f}"
    return f"{value[0]:.3f} [{value[1]:.3f}, {value[2]:.3f}]"


def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "n/a" if value is None else str(value)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    import torch

    if "device=cuda" not in args.model:
        torch.set_num_threads(min(2, torch.get_num_threads()))
    run(args)


if __name__ == "__main__":
    main()
