#!/usr/bin/env bash
# Example: the nightly hardware run as a Slurm job array, one shard per array task, each
# on one node with its SM90 GPUs (one worker per device), then a dependent merge job.
#   bash ci/examples/slurm-array.sh     # on the login node: builds, submits the array and the merge
# Environment (exported to the tasks): SEED (default: today's date), OUT (default
# reports/SEED), BIN (a harness binary to use instead of building one), and whatever
# ci/nightly reads (COUNT, INPUTS, VECTORS, ...). harness/tests/fake_driver.rs runs this
# script with a stand-in sbatch and the emulated driver.
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
out="${OUT:-reports/$seed}"
bin="${BIN:-$root/target/release/hmul2-harness}"
if [[ -z "${SLURM_ARRAY_TASK_ID:-}" ]]; then
  # not inside the array: build once, submit the array and a merge that runs after every
  # task, pass or fail
  [[ -n "${BIN:-}" ]] || cargo build --release -p hmul2-harness
  jid=$(sbatch --parsable --export=ALL,SEED="$seed",OUT="$out",BIN="$bin" "$0")
  # the merge fails when any kind of run fails to merge
  sbatch --dependency=afterany:"$jid" --job-name=hmul2-merge --time=00:20:00 --wrap \
    "cd '$root' && BIN='$bin' ci/merge-shards '$out/merged' '$out'/shard-*"
  echo "submitted array $jid (seed $seed) and its merge"
  exit 0
fi
BIN="$bin" SEED="$seed" SHARD="$SLURM_ARRAY_TASK_ID/$N" ci/nightly "$out/shard-$SLURM_ARRAY_TASK_ID"
