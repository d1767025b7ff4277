"""GRPO end to end on this machine: ``--steps`` steps with groups of ``--group`` rollouts on
small generated rooms, ``oracle`` sub-agents, the reference judge, an ``hf:`` root trained with
LoRA on CPU; prints every per-step field of ``CKPT/log.jsonl``, where a step's time goes and
peak memory.

    python benchmarks/bench_grpo.py [--model hf:local,threads=2 | --model hf:SFT_CKPT]
        [--steps 3] [--group 4] [--turns 3] [--tokens 96] [--docs 8] [--rooms 2]
        [--temperature 1.0] [--out DIR]

Whether reward rises in so few steps is measured, not promised: an untrained 135M root often
writes nothing the judge passes, and then every group has zero variance and is dropped.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

from dealroom.train import train_grpo
from dealroom.train._grpo_settings import spec_from_dict

FIELDS = ("reward_mean", "reward_std", "pass_rate", "all_pass", "coverage", "sub_calls", "waves",
          "largest_wave", "memo_incremental_rate", "root_tokens", "rollouts", "groups",
          "groups_dropped", "groups_lost", "crashed", "judge_errors", "untrainable", "loss",
          "clip_fraction", "entropy", "kl", "staleness", "trained_tokens", "rollout_s",
          "train_s", "step_s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="hf:local,threads=2")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=96, help="tokens per root reply")
    parser.add_argument("--docs", type=int, default=8)
    parser.add_argument("--rooms", type=int, default=2,
                        help="generated training rooms (seeds 1..N); with 1, every step's "
                             "reward is the same room's")
    parser.add_argument("--extra-groups", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=1.0,
                        help="the root's sampling temperature in rollouts (and the loss's)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.rooms < 1:
        parser.error("--rooms must be at least 1")
    import torch

    torch.set_num_threads(2)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-grpo-")) / "CKPT"
    spec = spec_from_dict({
        "model": args.model, "sub": "oracle", "judge": "reference",
        "generate": [{"docs": args.docs, "seed": s, "secret": "bench"}
                     for s in range(1, args.rooms + 1)],
        "grpo": {"group_size": args.group, "batch_size": args.group, "steps": args.steps,
                 "max_turns": args.turns, "max_new_tokens": args.tokens,
                 "extra_groups": args.extra_groups, "save_every": args.steps,
                 "temperature": args.temperature,
                 "learning_rate": 1e-5},
    })
    started = time.perf_counter()

    def show(step: int, total: int) -> None:
        row = json.loads((out / "log.jsonl").read_text().splitlines()[-1])
        print(f"step {step}/{total}: " + ", ".join(f"{k}={_fmt(row.get(k))}" for k in FIELDS),
              flush=True)

    result = train_grpo(spec, out, progress=show)
    total = time.perf_counter() - started
    rollout = sum(r["rollout_s"] for r in result.log)
    train = sum(r["train_s"] for r in result.log)
    tokens = sum(r["root_tokens"] for r in result.log)
    print(f"\n{args.model}: {len(result.log)} steps in {total:,.1f} s (model load and room "
          f"generation included); rollouts {rollout:,.1f} s ({rollout / total:.0%}), "
          f"training {train:,.1f} s ({train / total:.0%}); root tokens sampled {tokens:,} "
          f"({tokens / rollout:,.1f} tok/s over rollout time); reward per step "
          f"{[_fmt(r['reward_mean']) for r in result.log]}; peak RSS {_peak_mb():,.0f} MB "
          f"(this process or its largest child); checkpoint {result.out}")


def _peak_mb() -> float:
    """The larger of this process's and its largest child's peak resident memory, in MB."""
    return max(resource.getrusage(who).ru_maxrss
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "n/a" if value is None else str(value)


if __name__ == "__main__":
    main()
