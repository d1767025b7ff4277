"""GRPO end to end on this machine: ``--steps`` steps with groups of ``--group`` rollouts on
small generated rooms, ``oracle`` sub-agents, the reference judge, an ``hf:`` root trained with
LoRA on CPU; prints every per-step field of ``CKPT/log.jsonl``, where a step's time goes and
peak memory.

    python benchmarks/bench_grpo.py [--model hf:local,threads=2 | --model hf:SFT_CKPT]
        [--steps 3] [--group 4] [--turns 3] [--tokens 96] [--docs 8] [--rooms 2]
        [--temperature 1.0] [--out DIR]

Whether reward rises in so few steps is measured, not promised: an untrained 135M root often
writes nothing the judge passes, and then every group has zero variance and is dropped.

    python benchmarks/bench_grpo.py --update-only [--episode-tokens 4096] [--model ...]

measures one update alone (no rollouts) on a group of two episodes of ``--episode-tokens``
tokens (a 1,000-token prompt, then 256 sampled tokens and 512 of REPL output in turn), each
way in a process of its own: ``before`` (the whole vocabulary's log-softmax at every
position, as the loss was computed until 2026-12-04, no activation checkpointing),
``selective`` (the chunked selective log-softmax) and ``after`` (that and activation
checkpointing, the default); it prints seconds and peak memory (GPU memory on CUDA, else the
process's peak RSS) and the ratio to ``before``.

    python benchmarks/bench_grpo.py --rollout-speed [--group 4] [--turns 2] [--tokens 64]
        [--repeat 2] [--model ...]

measures the rollouts of one step (one group of ``--group`` episodes, the update left out)
twice, each way in a process of its own: one at a time (``rollout_batch = 1``, as GRPO ran
them until 2026-12-07) and side by side in lock-step (``rollout_batch = --group``, the
replies due together one batch); it prints root tokens per second of rollout time, the
seconds spent generating (and their share), the batch sizes, and the ratio. Both ways sample
the same tokens (the seeds are the same), so the token counts match.
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


WAYS = {"before": ("full", False), "selective": ("selective", False),
        "after": ("selective", True)}
"""Each update-only way: (the loss's logprobs, activation checkpointing)."""


def full_softmax_logprobs(model, input_ids, temperature, where=None):  # noqa: ANN001, ANN201
    """The loss's logprobs as computed until 2026-12-04 (the peer): the whole vocabulary's
    log-softmax at every position, then the trained positions picked."""
    import torch

    logits = model(input_ids=input_ids).logits[0, :-1].float() / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(-1, input_ids[0, 1:, None])[:, 0]
    with torch.no_grad():
        detached = logp_all.detach()
        entropy = -(detached.exp() * detached).sum(-1)
    return (logp, entropy) if where is None else (logp[where], entropy[where])


def synthetic_group(tokens: int, vocab: int, seed: int = 0):  # noqa: ANN201
    """A kept group of two episodes of ``tokens`` tokens with advantages +1 and -1."""
    import random as rand

    from dealroom.train._grpo_step import Group
    from dealroom.train._rollout import Episode, Rollout

    rng = rand.Random(seed)
    mask = [0] * min(1000, tokens - 1)
    while len(mask) < tokens:
        mask += [1] * 256 + [0] * 512
    mask = mask[:tokens]
    episodes = [Episode([rng.randrange(vocab) for _ in range(tokens)], mask,
                        [-2.0] * sum(mask)) for _ in range(2)]
    rollouts = [Rollout("x", 0, 0, k, 0, "room", 1, 0) for k in (0, 1)]
    return Group(0, "room", 1, rollouts, trained=rollouts, episodes=episodes,
                 advantages=[1.0, -1.0])


def update_figures(model_spec: str, tokens: int, way: str) -> dict:
    """One GRPO update of a fresh LoRA policy on :func:`synthetic_group`, done ``way``:
    its seconds, loss and peak memory (GPU memory on CUDA, else this process's peak RSS)."""
    import torch
    from peft import get_peft_model

    from dealroom.models import load_hf_model
    from dealroom.train import GRPOSettings
    from dealroom.train import _grpo_step as step_module
    from dealroom.train._grpo import enable_checkpointing
    from dealroom.train._settings import lora_config

    loss, checkpointing = WAYS[way]
    settings = GRPOSettings(activation_checkpointing=checkpointing)
    loaded = load_hf_model(model_spec)
    model = get_peft_model(loaded.model, lora_config(settings))
    if checkpointing:
        enable_checkpointing(model)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    group = synthetic_group(tokens, model.get_input_embeddings().num_embeddings)
    cuda = str(loaded.device).startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    selective = step_module.token_logprobs
    if loss == "full":
        step_module.token_logprobs = full_softmax_logprobs
    started = time.perf_counter()
    try:
        figures = step_module.update(model, optimizer, [group], settings, step=0)
    finally:
        step_module.token_logprobs = selective
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    peak = (torch.cuda.max_memory_allocated() / 2**20 if cuda else _peak_mb())
    return {"way": way, "tokens": tokens, "seconds": round(seconds, 2),
            "loss": figures["loss"], "trained_tokens": figures["trained_tokens"],
            "peak_mb": round(peak, 1), "memory": "gpu" if cuda else "rss"}


def update_only(model: str, tokens: int) -> None:
    """Each way of :data:`WAYS` in a process of its own; a table with ratios to ``before``."""
    import subprocess
    import sys

    rows = []
    for way in WAYS:
        done = subprocess.run([sys.executable, __file__, "--update-only", "--model", model,
                               "--episode-tokens", str(tokens), "--way", way],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{way}: failed:\n{done.stderr[-2000:]}")
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = rows[0]
    print(f"one GRPO update, 2 episodes of {tokens:,} tokens, {model}:")
    for row in rows:
        ratio = row['seconds'] / base['seconds']
        print(f"  {row['way']:<9} {row['seconds']:>8.1f} s ({ratio:.2f}x)"
              f"  peak {row['memory']} {row['peak_mb']:>9,.0f} MB "
              f"({row['peak_mb'] / base['peak_mb']:.2f}x)  loss {row['loss']:.3g}")


def rollout_figures(args: argparse.Namespace, width: int) -> dict:
    """One step's rollouts (one group, no update) with ``rollout_batch = width``: root
    tokens, rollout seconds, seconds inside ``generate`` and the batch sizes."""
    from collections import Counter

    from dealroom.models import _hfbatch
    from dealroom.train import _grpo

    sizes: Counter[int] = Counter()
    generating = [0.0]
    plain_batch, plain_update = _hfbatch.sample_batch, _grpo.update

    def timed(loaded, rows, pieces):  # noqa: ANN001, ANN202
        clock = time.perf_counter()
        try:
            return plain_batch(loaded, rows, pieces)
        finally:
            generating[0] += time.perf_counter() - clock
            sizes[len(rows)] += 1

    def no_update(model, optimizer, groups, settings, step):  # noqa: ANN001, ANN202
        return plain_update(model, optimizer, [], settings, step)  # rollouts only

    _hfbatch.sample_batch, _grpo.update = timed, no_update
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-grpo-speed-")) / "CKPT"
    spec = spec_from_dict({
        "model": args.model, "sub": "oracle", "judge": "reference",
        "generate": [{"docs": args.docs, "seed": 1, "secret": "bench"}],
        "grpo": {"group_size": args.group, "batch_size": args.group, "steps": 1,
                 "max_turns": args.turns, "max_new_tokens": args.tokens, "extra_groups": 0,
                 "temperature": args.temperature, "rollout_batch": width}})
    row = train_grpo(spec, out).log[0]
    return {"rollout_batch": width, "root_tokens": row["root_tokens"],
            "rollout_s": row["rollout_s"], "generate_s": round(generating[0], 2),
            "batches": dict(sorted(sizes.items())), "rollouts": row["rollouts"]}


def rollout_speed(args: argparse.Namespace) -> None:
    """:func:`rollout_figures` one at a time and batched, each in a process of its own,
    ``--repeat`` times in the order 1, G, G, 1, 1, G... (so a load that drifts weighs on both
    ways alike); the ratio is of the ways' total tokens per total second."""
    import subprocess
    import sys

    rows = []
    order = [w for r in range(args.repeat)
             for w in ((1, args.group) if r % 2 == 0 else (args.group, 1))]
    for width in order:
        done = subprocess.run([sys.executable, __file__, "--rollout-speed", "--width",
                               str(width), "--model", args.model, "--group", str(args.group),
                               "--turns", str(args.turns), "--tokens", str(args.tokens),
                               "--docs", str(args.docs), "--temperature",
                               str(args.temperature)], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"rollout_batch={width}: failed:\n{done.stderr[-2000:]}")
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"one step's rollouts, G={args.group}, {args.turns} turns x {args.tokens} tokens, "
          f"{args.model}:")
    for row in rows:
        print(f"  rollout_batch={row['rollout_batch']:<3} {row['root_tokens']:>6,} root tokens "
              f"in {row['rollout_s']:>7.1f} s = {row['root_tokens'] / row['rollout_s']:6.2f} "
              f"tok/s; generating {row['generate_s']:.1f} s "
              f"({row['generate_s'] / row['rollout_s']:.0%}); batches by size {row['batches']}")
    speed = {w: sum(r["root_tokens"] for r in rows if r["rollout_batch"] == w)
             / sum(r["rollout_s"] for r in rows if r["rollout_batch"] == w) for w in set(order)}
    print(f"  batched / one at a time: {speed[args.group]:.2f} / {speed[1]:.2f} tok/s = "
          f"{speed[args.group] / speed[1]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update-only", action="store_true",
                        help="one update on synthetic episodes, before and after (see above)")
    parser.add_argument("--episode-tokens", type=int, default=4096)
    parser.add_argument("--way", choices=list(WAYS), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--rollout-speed", action="store_true",
                        help="one step's rollouts one at a time and batched (see above)")
    parser.add_argument("--width", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=2,
                        help="--rollout-speed: runs of each way, in the order 1, G, G, 1...")
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
    if args.update_only:
        import torch

        torch.set_num_threads(2)
        if args.way:
            print(json.dumps(update_figures(args.model, args.episode_tokens, args.way)))
        else:
            update_only(args.model, args.episode_tokens)
        return
    if args.rollout_speed:
        import torch

        torch.set_num_threads(2)
        if args.width:
            print(json.dumps(rollout_figures(args, args.width)))
        else:
            rollout_speed(args)
        return
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
