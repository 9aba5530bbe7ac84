#!/usr/bin/env bash
# Rebuild the scaffold cubins (the scaffold road, harness/kernel/src/kernel/scaffold.rs) with
# the pinned ptxas (13.0.88; `bash ci/install-tools.sh`). harness/tests/kernel_scaffold.rs runs
# the same command and compares bytes with the committed files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ptxas="${HMUL2_PTXAS:-$here/../.tools/bin/ptxas}"
out="${1:-$here/scaffold}"
for ptx in "$here"/scaffold/*.ptx; do
    name="$(basename "$ptx" .ptx)"
    "$ptxas" -arch=sm_90 -O3 "$ptx" -o "$out/$name.sm_90.cubin"
done
