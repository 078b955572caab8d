//! The shared data model of cellscope: what a cell is, how its status is decided and how its metrics are computed.
//!
//! This crate does no IO and builds for `wasm32-unknown-unknown`, so the server, the CLI and the browser app
//! compute every number from one implementation. The definitions are written out in docs/definitions.md; where a
//! choice was needed it is written next to the code that makes it.

#![warn(missing_docs)]

pub mod accelerator;
pub mod api;
pub mod audit;
#[cfg(feature = "clap")]
pub mod cli_values;
pub mod compare;
pub mod config;
pub mod curve;
pub mod distribution;
pub mod engine;
mod escape;
pub mod exclusions;
pub mod explore;
pub mod export;
pub mod facts;
pub mod filter;
pub mod frontier;
pub mod history;
pub mod key;
pub mod lineage;
pub mod load;
pub mod metric;
pub mod order;
pub mod origin;
pub mod paired;
pub mod pooling;
pub mod query;
pub mod reasons;
pub mod requests;
pub mod runs;
pub mod scaling;
pub mod schema;
pub mod slo;
pub mod stat;
pub mod stats;
pub mod status;
pub mod suggest;
pub mod summary;
pub mod view_state;

pub use key::{CellKey, Dimension, SeriesKey};
pub use load::{Load, LoadKind, RateRps};
pub use scaling::{Criterion, breakdown_n};
pub use stats::{CellAccumulator, CellStats, RequestSample, quantile_linear};
pub use status::CellStatus;
pub use summary::CellSummary;
