#!/usr/bin/env bash
# Installs NVIDIA's disassembler, assembler and object dumper, pinned, into .tools/ (git-ignored).
# Idempotent: a second run with the same pins does nothing. No GPU or driver is needed.
#   .tools/bin/nvdisasm   the oracle for syntax and legality (nvidia-cuda-nvdisasm)
#   .tools/bin/ptxas      builds the sm_90 template kernel (nvidia-cuda-nvcc; 13.0 = driver 580's CUDA)
#   .tools/bin/cuobjdump  reports a cubin's resource usage (nvidia-cuda-cuobjdump)
#   .tools/bin/ptxas-12.9 builds the second template (nvidia-cuda-nvcc-cu12 12.9: no
#                         EIATTR_MERCURY_ISA_VERSION in sm_90 cubins, which 13.0 writes)
# nvdisasm and cuobjdump are published from 13.2 on; they only read code, so a newer one is fine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
pins=(
  "nvidia-cuda-nvdisasm==13.2.86"
  "nvidia-cuda-nvcc==13.0.88"
  "nvidia-cuda-cuobjdump==13.2.86"
)
# its own venv: both nvcc packages ship a bin/ptxas
pin129="nvidia-cuda-nvcc-cu12==12.9.86"
install129() {
  rm -rf "$tools/venv-12.9"
  "$python" -m venv "$tools/venv-12.9"
  "$tools/venv-12.9/bin/pip" install --quiet --disable-pip-version-check --no-deps "$pin129"
  local site bin
  site="$("$tools/venv-12.9/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  bin="$(find "$site/nvidia" -type f -name ptxas -path '*/bin/*' | head -n 1)"
  [[ -n "$bin" ]] || { echo "install-tools: ptxas not found after installing $pin129" >&2; exit 1; }
  chmod +x "$bin"
  ln -sf "$bin" "$tools/bin/ptxas-12.9"
  "$tools/bin/ptxas-12.9" --version | tail -n 2 | head -n 1 | sed "s/^/install-tools: ptxas-12.9: /"
  echo "$pin129" >"$tools/pins-12.9.txt"
}
python="${PYTHON:-python3}"
stamp="$tools/pins.txt"
want="$(printf '%s\n' "${pins[@]}")"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] \
   && [[ -x "$tools/bin/nvdisasm" && -x "$tools/bin/ptxas" && -x "$tools/bin/cuobjdump" ]]; then
  if [[ ! -x "$tools/bin/ptxas-12.9" || "$(cat "$tools/pins-12.9.txt" 2>/dev/null)" != "$pin129" ]]; then
    install129
  fi
  echo "install-tools: pinned NVIDIA tools already in $tools"
  exit 0
fi
command -v "$python" >/dev/null || { echo "install-tools: python3 is required" >&2; exit 1; }
rm -rf "$tools"
mkdir -p "$tools/bin"
"$python" -m venv "$tools/venv"
# --no-deps: the packages' runtime dependencies (crt headers, nvvm) are not needed by these three binaries.
"$tools/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "${pins[@]}"
site="$("$tools/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
for t in nvdisasm ptxas cuobjdump; do
  bin="$(find "$site/nvidia" -type f -name "$t" -path '*/bin/*' | head -n 1)"
  [[ -n "$bin" ]] || { echo "install-tools: $t not found after installing the pins" >&2; exit 1; }
  chmod +x "$bin"
  ln -sf "$bin" "$tools/bin/$t"
  "$tools/bin/$t" --version | tail -n 2 | head -n 1 | sed "s/^/install-tools: $t: /"
done
install129
echo "$want" > "$stamp"
