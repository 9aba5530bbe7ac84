#!/usr/bin/env bash
# Rebuild the template cubin with the pinned ptxas (13.0.88; `bash ci/install-tools.sh`).
# The test kernel_template.rs runs the same command and compares bytes with the committed file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ptxas="${HMUL2_PTXAS:-$here/../.tools/bin/ptxas}"
# One template per target (harness_isa::target::Target::ALL, whose template_file names each):
# the same PTX, its `.target` set to the architecture and, for SM100 and SM120 (which PTX 8.0
# predates), its `.version` to 8.7. SM90's PTX is the file as committed.
for arch in sm_80 sm_86 sm_89 sm_90 sm_100 sm_120; do
    version=8.0
    case "$arch" in sm_100 | sm_120) version=8.7 ;; esac
    ptx="$(mktemp --suffix=.ptx)"
    sed -e "s/^\.target sm_90\$/.target $arch/" -e "s/^\.version 8\.0\$/.version $version/" "$here/hmul2_template.ptx" >"$ptx"
    "$ptxas" -arch="$arch" -O3 "$ptx" -o "$here/hmul2_template.$arch.cubin"
    rm -f "$ptx"
done
arch=sm_90
# The second template: the same PTX through ptxas 12.9.86 (`.tools/bin/ptxas-12.9`), which
# writes no EIATTR_MERCURY_ISA_VERSION into sm_90 cubins (13.0 does: code so marked may be
# re-finalized by the driver). `run --template 12.9` patches it instead.
ptxas129="${HMUL2_PTXAS_12_9:-$here/../.tools/bin/ptxas-12.9}"
"$ptxas129" -arch="$arch" -O3 "$here/hmul2_template.ptx" -o "$here/hmul2_template.$arch.ptxas-12.9.cubin"
