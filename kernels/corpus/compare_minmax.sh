#!/usr/bin/env bash
# The ptxas corpus of HSET2, HSETP2 and HMNMX2 (issue 41): writes compare_minmax.ptx (one
# kernel per PTX operation: min/max with .NaN and .xorsign.abs, set with every comparison
# and destination type, setp with every comparison, on f16x2 and bf16x2) and
# compare_minmax.sass (what the pinned ptxas 13.0 makes of each, -arch=sm_90 -O3, as
# cuobjdump -sass lists it: `kernel<TAB>ptx<TAB>sass` per instruction, addresses and
# encodings left out). harness/reference/tests/ptxas_compare_minmax.rs re-runs ptxas and
# cuobjdump on the .ptx, fails if the listing differs, and checks the reference against
# the PTX ISA's definition of each operation on the SASS ptxas chose.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ptxas="${HMUL2_PTXAS:-$here/../../.tools/bin/ptxas}"
cuobjdump="${HMUL2_CUOBJDUMP:-$here/../../.tools/bin/cuobjdump}"
# HMUL2_CORPUS_OUT: where to write both files (the test writes them to a temporary folder
# and compares them with the committed ones)
out="${HMUL2_CORPUS_OUT:-$here}"
ptx="$out/compare_minmax.ptx"
cmps="eq ne lt le gt ge equ neu ltu leu gtu geu num nan"

# the PTX operations, one a line: %r1 = a, %r2 = b, %p3 = c (the word at +8 nonzero);
# a register result in %r4, predicate results in %p1 (stored as 1) and %p2 (as 2)
ops() {
    for t in f16x2 bf16x2; do
        for m in min max; do
            for v in "" .NaN .xorsign.abs .NaN.xorsign.abs; do
                echo "$m$v.$t %r4, %r1, %r2;"
            done
        done
    done
    echo "min.ftz.f16x2 %r4, %r1, %r2;"
    echo "max.ftz.NaN.xorsign.abs.f16x2 %r4, %r1, %r2;"
    for c in $cmps; do
        echo "set.$c.f16x2.f16x2 %r4, %r1, %r2;"
        echo "set.$c.u32.f16x2 %r4, %r1, %r2;"
        echo "set.$c.bf16x2.bf16x2 %r4, %r1, %r2;"
        echo "set.$c.u32.bf16x2 %r4, %r1, %r2;"
        echo "setp.$c.f16x2 %p1|%p2, %r1, %r2;"
        echo "setp.$c.bf16x2 %p1|%p2, %r1, %r2;"
    done
    echo "set.lt.ftz.f16x2.f16x2 %r4, %r1, %r2;"
    echo "setp.eq.ftz.f16x2 %p1|%p2, %r1, %r2;"
    for b in and or xor; do
        echo "set.le.$b.f16x2.f16x2 %r4, %r1, %r2, %p3;"
        echo "set.gtu.$b.u32.bf16x2 %r4, %r1, %r2, !%p3;"
        echo "setp.ne.$b.f16x2 %p1|%p2, %r1, %r2, %p3;"
        echo "setp.nan.$b.bf16x2 %p1|%p2, %r1, %r2, !%p3;"
    done
}

{
    printf '.version 8.0\n.target sm_90\n.address_size 64\n'
    n=0
    while IFS= read -r op; do
        printf '\n// %s\n.visible .entry k%d(.param .u64 p)\n{\n' "$op" "$n"
        printf '  .reg .b32 %%r<8>;\n  .reg .pred %%p<4>;\n  .reg .b64 %%rd<3>;\n'
        printf '  ld.param.u64 %%rd1, [p];\n  cvta.to.global.u64 %%rd2, %%rd1;\n'
        printf '  ld.global.v2.b32 {%%r1, %%r2}, [%%rd2];\n  ld.global.b32 %%r3, [%%rd2+8];\n'
        printf '  setp.ne.u32 %%p3, %%r3, 0;\n  %s\n' "$op"
        case "$op" in
            setp*) printf '  selp.b32 %%r5, 1, 0, %%p1;\n  selp.b32 %%r6, 2, 0, %%p2;\n  st.global.v2.b32 [%%rd2], {%%r5, %%r6};\n' ;;
            *) printf '  st.global.b32 [%%rd2], %%r4;\n' ;;
        esac
        printf '  ret;\n}\n'
        n=$((n + 1))
    done < <(ops)
} >"$ptx"

cubin="$(mktemp --suffix=.cubin)"
trap 'rm -f "$cubin"' EXIT
"$ptxas" -arch=sm_90 -O3 "$ptx" -o "$cubin"
# the listing: per function, its instructions in address order (NOPs and the final BRA
# loop left out), each with the PTX operation its kernel holds
"$cuobjdump" -sass "$cubin" | awk -v ptxfile="$ptx" '
    BEGIN {
        while ((getline line < ptxfile) > 0) {
            if (line ~ /^\/\/ /) { op = substr(line, 4) }
            if (line ~ /^\.visible \.entry k[0-9]+/) { k = line; sub(/^\.visible \.entry /, "", k); sub(/\(.*/, "", k); ptx[k] = op }
        }
    }
    /Function : / { f = $3 }
    /\/\*[0-9a-f]+\*\// {
        t = $0; sub(/^.*\/\*[0-9a-f]+\*\/[ \t]*/, "", t); sub(/[ \t]*;.*$/, "", t)
        if (t == "NOP" || t ~ /^BRA / || t == "") next
        gsub(/[ \t]+/, " ", t)
        print f "\t" ptx[f] "\t" t
    }' | sort -t$'\t' -k1.2,1n -s >"$out/compare_minmax.sass"
echo "wrote $ptx and $out/compare_minmax.sass ($(wc -l <"$out/compare_minmax.sass") instructions)"
