//! The reference's integration tests, one test binary (cargo runs test binaries one after
//! another; one binary lets every file's tests share the cores). Each module is one file of
//! this folder; `cargo test -p harness-reference --test integration MODULE::` runs one.

mod fma_inst;
mod ptxas_compare_minmax;
mod ptxas_fma_semantics;
mod reference_compare_exhaustive;
mod reference_fma;
mod semantics_scope;
