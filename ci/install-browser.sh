#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium for the report's browser test
# (harness/tests/report_browser.rs). Idempotent: does nothing when chromium already runs.
# Fails loudly: any step that fails stops the script with a non-zero exit.
set -euo pipefail
bin="${HMUL2_CHROMIUM:-/usr/bin/chromium}"
if [[ -x "$bin" ]] && "$bin" --version >/dev/null 2>&1; then
  echo "install-browser: $("$bin" --version) already at $bin"
  exit 0
fi
sudo=""
if [[ "$(id -u)" != 0 ]]; then
  command -v sudo >/dev/null || { echo "install-browser: need root or sudo to run apt-get" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update
$sudo apt-get install -y --no-install-recommends chromium fonts-dejavu-core
[[ -x "$bin" ]] || { echo "install-browser: $bin missing after apt-get install chromium" >&2; exit 1; }
"$bin" --version | sed 's/^/install-browser: /'
