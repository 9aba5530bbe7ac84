#!/usr/bin/env bash
# The main job (README): installs the pinned NVIDIA tools, builds the release binary and runs
# `hmul2-harness run`. With an SM90 GPU and driver it runs the hardware checks; without one it
# runs every software-only check and says plainly that the hardware part did not run.
# Extra arguments go to `hmul2-harness run` (e.g. --seed 7 --count 20000).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash ci/install-tools.sh
cargo build --release --locked -p hmul2-harness
exec target/release/hmul2-harness run --out "${HMUL2_OUT:-out/main}" "$@"
