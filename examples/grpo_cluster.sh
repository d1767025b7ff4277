#!/usr/bin/env bash
# GRPO on one GPU node (docs/training.md, "Clusters"): frozen sub-agents on a vLLM server
# (GPUs 1..N-1, continuous batching), the root trained in-process on GPU 0. Needs vllm (in its
# own environment: it pins torch and transformers), dealroom[train] and the models on local
# disk; no network. Rerun it to resume after a kill.
#   SUB_MODEL=/models/sub ./examples/grpo_cluster.sh OUT
set -euo pipefail
OUT=${1:-rl-cluster}
HERE=$(dirname "$0")
SUB_MODEL=${SUB_MODEL:?set SUB_MODEL to the sub-agent model folder}
SUB_GPUS=${SUB_GPUS:-1,2,3}
TP=$(( $(tr -cd , <<<"$SUB_GPUS" | wc -c) + 1 ))

CUDA_VISIBLE_DEVICES=$SUB_GPUS vllm serve "$SUB_MODEL" --served-model-name sub \
    --port 8001 --tensor-parallel-size "$TP" --max-num-seqs 256 > "$OUT.vllm.log" 2>&1 &
VLLM=$!
trap 'kill $VLLM' EXIT
until curl -sf http://127.0.0.1:8001/v1/models > /dev/null; do sleep 5; done

CUDA_VISIBLE_DEVICES=0 dealroom train grpo "$HERE/grpo_cluster.toml" --out "$OUT" \
    ${BUDGETMIX:+--budgetmix "$BUDGETMIX"} $( [ -f "$OUT/train.json" ] && echo --resume )
# More held-out evaluation of any checkpoint, as Ray tasks across the cluster:
#   dealroom eval sweep heldout.toml --out "$OUT/eval-ray" --backend ray --address HEAD:6379
