//! The server's integration tests, one module per area, built as one test binary.
//!
//! Every test binary links the whole server (axum, arrow, parquet, object storage); fourteen of them spent more of
//! a CI run compiling and linking than running. As modules of one crate they also share one generated demo data
//! root (`common::demo_root`). Tests in different modules now run on threads of one process, so none may change
//! process-wide state (environment variables, the working directory).

// A test fails by panicking, and so may the helpers the tests share.
#![allow(clippy::unwrap_used)]

mod common;
// The support both suites share: the index's suite owns it, and this crate includes it by its path.
#[path = "../../../index/tests/suite/common.rs"]
mod shared;

mod bundle;
mod cache;
mod cli;
mod compare_demo;
mod connections;
mod demo_oracles;
mod fixtures;
mod formats;
mod fuzz_corpus;
mod history;
mod http;
mod http_socket;
mod limits;
mod not_recognised;
mod reliability;
