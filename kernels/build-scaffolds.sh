#!/usr/bin/env bash
# Rebuild the scaffold cubins (the scaffold road, harness/kernel/src/kernel/scaffold.rs) with
# the pinned ptxas (13.0.88; `bash ci/install-tools.sh`), one set per target
# (harness_isa::target::Target::ALL): `<name>.<ptxas arch>.cubin`, the same PTX with its
# `.target` set to the architecture and, for SM100 and SM120 (which PTX 8.0 predates), its
# `.version` to 8.7, as kernels/build.sh does for the template; SM100 and SM120, which have
# no c[] form of these instructions, keep one word of the 64 KiB `.const` data (`cdata[1]`:
# the code reads only its first word; 2.3 MB less committed). SM90's PTX is the file as
# committed. A target's own PTX of a scaffold, `<name>.<sm_NN>.ptx`, where there is one, is
# built instead (sm_80's HMUL2 and HADD2 scaffolds: their decoy an fma, or ptxas computes the
# instruction with HFMA2.MMA there). harness/tests/kernel_scaffold.rs runs this script and
# compares bytes with the committed files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ptxas="${HMUL2_PTXAS:-$here/../.tools/bin/ptxas}"
out="${1:-$here/scaffold}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for arch in sm_80 sm_86 sm_89 sm_90 sm_100 sm_120; do
    version=8.0 words=16384
    case "$arch" in sm_100 | sm_120) version=8.7 words=1 ;; esac
    for ptx in "$here"/scaffold/*.ptx; do
        name="$(basename "$ptx" .ptx)"
        case "$name" in *.sm_*) continue ;; esac
        [ -f "$here/scaffold/$name.$arch.ptx" ] && ptx="$here/scaffold/$name.$arch.ptx"
        sed -e "s/^\.target sm_90\$/.target $arch/" -e "s/^\.version 8\.0\$/.version $version/" \
            -e "s/^\.const \.align 4 \.b32 cdata\[16384\] = {1};\$/.const .align 4 .b32 cdata[$words] = {1};/" "$ptx" >"$tmp/$name.ptx"
        "$ptxas" -arch="$arch" -O3 "$tmp/$name.ptx" -o "$out/$name.$arch.cubin"
    done
done
