#!/usr/bin/env bash
# The project's test command (README): installs what the tests need, then runs every test.
# Nothing is skipped: a test whose tool is missing fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash ci/install-tools.sh
bash ci/install-browser.sh
cargo test --workspace --locked "$@"
