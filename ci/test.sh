#!/usr/bin/env bash
# The project's test command (README): installs what the tests need, checks formatting and
# clippy's lints and the API docs (warnings are errors), then runs every test.
# No test is skipped for a missing tool: a test whose tool is missing fails. (Only the GPU
# test of harness/tests/run_gpu.rs is #[ignore]d here; ci/gpu-check runs it on an SM90.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash ci/install-tools.sh
bash ci/install-browser.sh
# style and lints first: a formatting drift or a clippy warning fails the run
rustup component add rustfmt clippy >/dev/null 2>&1 || true
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# the libraries build alone, as another crate uses them (without the command-line `tools` feature)
cargo check -p harness-reference --locked
cargo check -p harness-isa --no-default-features --locked
# the API docs build without a warning (a link to a private or missing item fails)
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
# every exhaustive sweep whole (a plain `cargo test` samples them, and says so)
export HMUL2_TEST_LEVEL=full
# every word asked of nvdisasm itself: no verdict from its cache (a developer's loop keeps
# them; harness/isa/src/nvdisasm/cache.rs)
export HMUL2_NVDISASM_CACHE=off
cargo test --workspace --locked "$@"
