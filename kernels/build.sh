#!/usr/bin/env bash
# Rebuild the template cubin with the pinned ptxas (13.0.88; `bash ci/install-tools.sh`).
# The test kernel_template.rs runs the same command and compares bytes with the committed file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ptxas="${HMUL2_PTXAS:-$here/../.tools/bin/ptxas}"
"$ptxas" -arch=sm_90 -O3 "$here/hmul2_template.ptx" -o "$here/hmul2_template.sm_90.cubin"
