//! The index's integration tests, one module per area, built as one test binary (each test binary links the whole
//! index again): the format oracles, the fixtures, the cache, lineage and the fuzz corpus, all through the crate's
//! public surface and none through the HTTP server or the CLI binary, so they build without axum or tokio.

// A test fails by panicking, and so may the helpers the tests share.
#![allow(clippy::unwrap_used)]

mod common;

mod fixtures;
mod formats;
mod fuzz_corpus;
