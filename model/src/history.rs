//! A configuration's metric across runs in time order: where it changed, and whether the change is a regression.
//!
//! Only the math lives here so far: the browser, the server and the CLI call the same functions and print the
//! same change points.

pub mod changepoint;
