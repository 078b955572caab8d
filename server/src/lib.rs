//! cellscope: indexes LLM serving-benchmark run directories and serves cell summaries.
//!
//! `cellscope_index` turns a data root into cells with statuses, metrics and provenance; [`export`] writes the cells
//! table as CSV, JSON or Arrow IPC; [`remote`] mirrors a data root in object storage; [`audit`] builds the model's audit report of an index for `cellscope audit`.

pub mod audit;
pub mod bundle;
pub mod export;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod http;
pub mod remote;
pub mod terminal;
