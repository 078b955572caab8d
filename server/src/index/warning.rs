//! Warnings: what indexing found wrong, named by run, file and line, so a user can open the file and look.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How loud a warning is. `Error` means data was lost from the index (a row, a file, a run); `Warning` means
/// data is kept but something about it is suspicious.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Warning,
    Error,
}

/// One finding. `run` is the run id (or `None` for root-level files such as `exclusions.toml`); `file` is the
/// path relative to the data root; `line` is 1-based where it applies.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Warning {
    pub severity: Severity,
    /// A stable machine-readable kind, e.g. `ragged_row`, `missing_column`, `splice_replaced_ok_row`.
    pub kind: String,
    pub run: Option<String>,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub message: String,
}

impl Warning {
    pub fn new(severity: Severity, kind: &str, message: impl Into<String>) -> Warning {
        Warning {
            severity,
            kind: kind.to_string(),
            run: None,
            file: None,
            line: None,
            message: message.into(),
        }
    }

    pub fn warn(kind: &str, message: impl Into<String>) -> Warning {
        Warning::new(Severity::Warning, kind, message)
    }

    pub fn error(kind: &str, message: impl Into<String>) -> Warning {
        Warning::new(Severity::Error, kind, message)
    }

    pub fn run(mut self, run: &str) -> Warning {
        self.run = Some(run.to_string());
        self
    }

    pub fn file(mut self, file: &str) -> Warning {
        self.file = Some(file.to_string());
        self
    }

    pub fn line(mut self, line: u64) -> Warning {
        self.line = Some(line);
        self
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{severity}[{}]", self.kind)?;
        if let Some(run) = &self.run {
            write!(f, " run {run}")?;
        }
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, " {file}:{line}")?,
            (Some(file), None) => write!(f, " {file}")?,
            _ => {}
        }
        write!(f, ": {}", self.message)
    }
}
