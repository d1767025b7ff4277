#!/usr/bin/env bash
# SkyRL fully asynchronous GRPO on dealroom episodes (docs/training.md, "Clusters"): the root
# served by SkyRL's vLLM inference engines with LoRA updated in flight, off-policy age capped by
# max_staleness_steps, token-level TIS; the frozen sub-agents on their own vLLM endpoint
# (SUB_URL, started beforehand as in examples/grpo_cluster.sh). Needs skyrl-train (Python 3.12,
# its own environment) with dealroom[skyrl] installed in it. Checked for syntax only here.
#   ROOT_MODEL=/models/root SUB_URL=http://SUBHOST:8001/v1 ./examples/skyrl_fully_async.sh
set -euo pipefail
HERE=$(dirname "$0")
DATA=${DATA:-$HOME/dealroom-skyrl}
ROOT_MODEL=${ROOT_MODEL:?set ROOT_MODEL to the root model folder}
SUB_URL=${SUB_URL:?set SUB_URL to the frozen sub-agents endpoint}
MAX_STALENESS=${MAX_STALENESS:-1}
BATCH=${BATCH:-24}         # episodes per step: 3 rooms x 8 samples
mkdir -p "$DATA"
python "$HERE/skyrl_dataset.py" "${ROOMS:-rooms/train/*}" "$DATA/train.parquet" \
    --episodes "$DATA/episodes" --sub "sub@$SUB_URL" --max-turns 30
python "$HERE/skyrl_dataset.py" "${HELDOUT:-rooms/heldout/*}" "$DATA/heldout.parquet" \
    --episodes "$DATA/heldout-episodes" --sub "sub@$SUB_URL" --max-turns 30

python "$HERE/skyrl_main.py" \
  data.train_data="['$DATA/train.parquet']" data.val_data="['$DATA/heldout.parquet']" \
  environment.env_class=dealroom \
  trainer.algorithm.advantage_estimator=grpo \
  trainer.algorithm.use_kl_loss=false \
  trainer.algorithm.off_policy_correction.tis_ratio_type=token \
  trainer.algorithm.off_policy_correction.token_tis_ratio_clip_high=2.0 \
  trainer.fully_async.max_staleness_steps="$MAX_STALENESS" \
  trainer.fully_async.num_parallel_generation_workers=$(( BATCH * (MAX_STALENESS + 1) )) \
  trainer.policy.model.path="$ROOT_MODEL" \
  trainer.policy.model.lora.rank=16 trainer.policy.model.lora.alpha=32 \
  trainer.placement.colocate_all=false trainer.strategy=fsdp2 \
  trainer.placement.policy_num_gpus_per_node="${POLICY_GPUS:-4}" \
  generator.num_inference_engines="${INFERENCE_GPUS:-4}" \
  generator.inference_engine_tensor_parallel_size=1 \
  generator.backend=vllm generator.async_engine=true generator.batched=false \
  generator.n_samples_per_prompt=8 generator.max_turns=30 \
  generator.sampling_params.max_generate_length=2048 \
  trainer.train_batch_size="$BATCH" trainer.policy_mini_batch_size="$BATCH" \
  trainer.max_prompt_length=8192 trainer.policy.optimizer_config.lr=1.0e-5 \
  trainer.eval_interval=10 trainer.ckpt_interval=5 trainer.resume_mode=latest \
  trainer.ckpt_path="$DATA/ckpt" trainer.logger="${LOGGER:-console}" "$@"
