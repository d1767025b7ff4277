#!/usr/bin/env bash
# GRPO with a vLLM-served root (docs/training.md, "A served policy"): the policy server on
# GPU 1 with runtime LoRA loading (the trainer pushes each step's adapter to it), the frozen
# sub-agents on GPUs 2..N-1, the update in-process on GPU 0. Needs vllm (in its own
# environment), dealroom[train] and the models on local disk; no network. Rerun to resume.
#   ROOT_MODEL=/models/root SUB_MODEL=/models/sub ./examples/grpo_served.sh OUT
set -euo pipefail
OUT=${1:-rl-served}
HERE=$(dirname "$0")
ROOT_MODEL=${ROOT_MODEL:?set ROOT_MODEL to the policy base model folder}
SUB_MODEL=${SUB_MODEL:?set SUB_MODEL to the sub-agent model folder}
SUB_GPUS=${SUB_GPUS:-2,3}
TP=$(( $(tr -cd , <<<"$SUB_GPUS" | wc -c) + 1 ))

CUDA_VISIBLE_DEVICES=1 VLLM_ALLOW_RUNTIME_LORA_UPDATING=True vllm serve "$ROOT_MODEL" \
    --port 8000 --enable-lora --max-lora-rank 16 --max-loras 2 \
    --logprobs-mode processed_logprobs > "$OUT.policy.log" 2>&1 &
POLICY=$!
CUDA_VISIBLE_DEVICES=$SUB_GPUS vllm serve "$SUB_MODEL" --served-model-name sub \
    --port 8001 --tensor-parallel-size "$TP" --max-num-seqs 256 > "$OUT.sub.log" 2>&1 &
SUB=$!
trap 'kill $POLICY $SUB' EXIT
for port in 8000 8001; do
  until curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null; do sleep 5; done
done

CUDA_VISIBLE_DEVICES=0 dealroom train grpo "$HERE/grpo_served.toml" --out "$OUT" \
    ${BUDGETMIX:+--budgetmix "$BUDGETMIX"} $( [ -f "$OUT/train.json" ] && echo --resume )
