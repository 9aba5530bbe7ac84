#!/usr/bin/env bash
# Example: the nightly hardware run as a Slurm job array, one shard per array task, each
# on one node with its SM90 GPUs (one worker per device), then a dependent merge job.
#   bash ci/examples/slurm-array.sh     # on the login node: builds, submits the array and the merge
#SBATCH --job-name=hmul2-nightly
#SBATCH --array=0-7
#SBATCH --gres=gpu:4               # SM90 nodes (H100/H200); one worker per GPU
#SBATCH --cpus-per-task=16
#SBATCH --time=04:00:00
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail
N=8
root="${SLURM_SUBMIT_DIR:-$(pwd)}"
cd "$root"
seed="${SEED:-$(date -u +%Y%m%d)}"
out="reports/$seed"
if [[ -z "${SLURM_ARRAY_TASK_ID:-}" ]]; then
  # not inside the array: build once, submit the array and a merge that runs after every
  # task, pass or fail
  cargo build --release -p hmul2-harness
  jid=$(sbatch --parsable --export=ALL,SEED="$seed" "$0")
  sbatch --dependency=afterany:"$jid" --job-name=hmul2-merge --time=00:20:00 --wrap \
    "cd '$root' && for d in $out/shard-0/*/; do k=\$(basename \$d); target/release/hmul2-harness merge $out/shard-*/\$k --out $out/merged/\$k; done"
  echo "submitted array $jid (seed $seed) and its merge"
  exit 0
fi
BIN="$root/target/release/hmul2-harness" SEED="$seed" SHARD="$SLURM_ARRAY_TASK_ID/$N" ci/nightly "$out/shard-$SLURM_ARRAY_TASK_ID"
