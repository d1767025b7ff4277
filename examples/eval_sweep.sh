#!/usr/bin/env bash
# The evaluation example end to end (docs/evaluation.md): the sweep, then Pass@(K,T), the
# table, the source's analyses and two paired comparisons. Run it again to continue after a kill.
set -euo pipefail
OUT=${1:-eval-sweep}
HERE=$(dirname "$0")
dealroom eval sweep "$HERE/eval_sweep.toml" --out "$OUT" --workers "${WORKERS:-2}"
dealroom eval passk "$OUT" --tau 0.5
dealroom eval table "$OUT" --by root,sub
dealroom eval analyze "$OUT"
dealroom eval compare "$OUT:root=scripted" "$OUT:root=scripted:coverage=0.3"
dealroom eval compare "$OUT:sub=oracle" "$OUT:sub=oracle:recall=0.6"
