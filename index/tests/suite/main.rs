//! The index's integration tests, one module per area, built as one test binary (each test binary links the whole
//! index again): the format oracles, the fixtures, lineage, files no reader recognises, rows read back, the chunked
//! parse and the fuzz corpus, all through the crate's public surface and none through the HTTP server or the CLI
//! binary, so they build without axum or tokio. `common.rs` is the support the server's suite shares.

// A test fails by panicking, and so may the helpers the tests share.
#![allow(clippy::unwrap_used)]

mod common;

mod chunked;
mod fixtures;
mod formats;
mod fuzz_corpus;
mod lineage;
mod not_recognised;
mod rows;
