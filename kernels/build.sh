#!/usr/bin/env bash
# Rebuild the template cubin with the pinned ptxas (13.0.88; `bash ci/install-tools.sh`).
# The test kernel_template.rs runs the same command and compares bytes with the committed file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ptxas="${HMUL2_PTXAS:-$here/../.tools/bin/ptxas}"
# The target's ptxas spelling (harness_isa::target::Target::SM90.ptxas, which names the file the
# crates compile in as Target::template_file); the only target today.
arch=sm_90
"$ptxas" -arch="$arch" -O3 "$here/hmul2_template.ptx" -o "$here/hmul2_template.$arch.cubin"
# The second template: the same PTX through ptxas 12.9.86 (`.tools/bin/ptxas-12.9`), which
# writes no EIATTR_MERCURY_ISA_VERSION into sm_90 cubins (13.0 does: code so marked may be
# re-finalized by the driver). `run --template 12.9` patches it instead.
ptxas129="${HMUL2_PTXAS_12_9:-$here/../.tools/bin/ptxas-12.9}"
"$ptxas129" -arch="$arch" -O3 "$here/hmul2_template.ptx" -o "$here/hmul2_template.$arch.ptxas-12.9.cubin"
