"""Routing benchmark: bulk reading on a cheap sub-agent, checks on a strong one, against
all-strong: pass rate and cost side by side.

Both sub-agents are the ``oracle`` simulator (it answers from the room's answer key), its
answer quality and price set per named model:

    fast    oracle:recall=R,noise=N,price_input=0.1,price_output=0.4     (a small model)
    strong  oracle:recall=1.0,price_input=2,price_output=8               (a large one)

Policies (the scripted root, the same plan and slices; seeds 0..K-1 draw the oracle's misses):

    all-strong   --sub strong=...                                   every reading call on strong
    routed       --sub fast=... --sub strong=...  root scripted:read=fast,check=strong
                 every reading call on fast, then each cited page read again by strong, whose
                 findings replace fast's (its misses stay missed; its wrong lines are dropped)

Each run is judged with the reference judge (the room's rubric, no model); the table gives the
mean pass rate, the mean cost per run and where it went (root / fast / strong).

    python benchmarks/bench_routing.py                   # 3 rooms of 30 documents, 3 seeds
    python benchmarks/bench_routing.py --recall 0.6 --noise 0.3 --docs 60
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from dealroom.harness import run_agent
from dealroom.judge import judge_run
from dealroom.room import generate_room

FAST = "oracle:recall={recall},noise={noise},seed={seed},price_input=0.1,price_output=0.4"
STRONG = "oracle:recall=1.0,seed={seed},price_input=2,price_output=8"


def policies(recall: float, noise: float, seed: int) -> dict[str, dict]:
    fast = FAST.format(recall=recall, noise=noise, seed=seed)
    strong = STRONG.format(seed=seed)
    return {
        "all-strong": {"root": "scripted", "sub": {"strong": strong}},
        "routed": {"root": "scripted:read=fast,check=strong",
                   "sub": {"fast": fast, "strong": strong}},
        "all-fast": {"root": "scripted", "sub": {"fast": fast}},
    }


def one(room: Path, out: Path, policy: dict, max_turns: int) -> dict:
    run_agent(room, out, root=policy["root"], sub=policy["sub"], max_turns=max_turns)
    scores = judge_run(out, "reference")
    usage = json.loads((out / "metrics.json").read_text())["usage"]
    return {"pass_rate": scores.pass_rate, "cost": usage["total"]["cost_usd"],
            "by_sub": {k: v["cost_usd"] for k, v in usage["by_sub"].items()},
            "calls": {k: v["calls"] for k, v in usage["by_sub"].items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=3)
    parser.add_argument("--docs", type=int, default=30)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--recall", type=float, default=0.7, help="fast's recall")
    parser.add_argument("--noise", type=float, default=0.2, help="fast's noise")
    parser.add_argument("--max-turns", type=int, default=30)
    args = parser.parse_args()
    rows: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rooms):
            room = Path(tmp) / f"room{r}"
            generate_room(room, docs=args.docs, seed=r, secret="bench-routing")
            for seed in range(args.seeds):
                for name, policy in policies(args.recall, args.noise, seed).items():
                    out = Path(tmp) / f"run-{r}-{seed}-{name}"
                    rows.setdefault(name, []).append(one(room, out, policy, args.max_turns))
    runs = args.rooms * args.seeds
    print(f"{args.rooms} rooms x {args.docs} documents x {args.seeds} seeds = {runs} runs per "
          f"policy; fast = oracle recall {args.recall}, noise {args.noise}, $0.1/$0.4 per 1M; "
          "strong = oracle recall 1.0, $2/$8 per 1M")
    print(f"{'policy':<11} {'pass rate':>9} {'cost/run':>9}  calls per run by sub  "
          "cost per run by sub")
    for name, results in rows.items():
        subs = sorted({k for x in results for k in x["by_sub"]})
        calls = ", ".join(f"{k} {statistics.mean(x['calls'].get(k, 0) for x in results):.0f}"
                          for k in subs)
        costs = ", ".join(f"{k} ${statistics.mean(x['by_sub'].get(k, 0) for x in results):.4f}"
                          for k in subs)
        print(f"{name:<11} {statistics.mean(x['pass_rate'] for x in results):>9.1%} "
              f"${statistics.mean(x['cost'] for x in results):>8.4f}  {calls:<20}  {costs}")


if __name__ == "__main__":
    main()
