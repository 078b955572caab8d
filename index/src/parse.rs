//! The readers the formats share: lenient JSON ([`json`]) and YAML ([`yaml`]), what detection sees of a long JSON
//! file ([`outline`]), the per-request arrays vLLM's and SGLang's results share ([`parallel`], with the fast
//! [`scan`] of vLLM's), the metric objects AIPerf and GenAI-Perf share ([`perf_metrics`]), and reading a whole file,
//! a file beside it or its JSON documents with a warning naming the file when it cannot be read.

pub(crate) mod json;
pub(crate) mod outline;
pub(crate) mod parallel;
pub(crate) mod perf_metrics;
pub(crate) mod scan;
pub(crate) mod time;
pub(crate) mod yaml;

use crate::storage::{self, Storage};
use cellscope_model::api::Warning;
use serde_json::Value as Json;

/// How many leading bytes detection looks at.
pub(crate) const HEAD_BYTES: u64 = 64 * 1024;

/// The last component of a model path or repository id (`meta-llama/Llama-3.1-8B` → `Llama-3.1-8B`), so the
/// same model served from a local directory and from a hub id line up.
pub(crate) fn model_name(raw: &str) -> String {
    let trimmed = raw.trim().trim_end_matches('/');
    trimmed
        .rsplit('/')
        .next()
        .filter(|name| !name.is_empty())
        .unwrap_or(trimmed)
        .to_string()
}

/// Reads a whole file, reporting a read failure as a warning on the file.
pub(crate) fn read_file(
    storage: &dyn Storage,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Vec<u8>> {
    match storage::read_bounded(storage, path, storage::MAX_DOCUMENT_BYTES) {
        Ok(bytes) => Some(bytes),
        Err(error) => {
            warnings.push(storage::unreadable_warning(&error, path));
            None
        }
    }
}

/// A file a reader looks for beside the one it reads (a summary, a per-request dump, a configuration): `None`
/// when there is none or it is empty, and also, with a warning naming it, when it is there but cannot be read (a FIFO, a
/// directory, a link, no permission).
pub(crate) fn read_sibling(
    storage: &dyn Storage,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Vec<u8>> {
    match storage::read_bounded(storage, path, storage::MAX_DOCUMENT_BYTES) {
        // Discovery names an empty file (`empty_file`); to its reader it is as good as absent.
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            warnings.push(storage::unreadable_warning(&error, path));
            None
        }
    }
}

/// A file that holds one JSON object (a summary, a report), or `None` with a warning naming the file (and the
/// line of a syntax error): `what` names the document in the message.
pub(crate) fn read_object(
    storage: &dyn Storage,
    path: &str,
    what: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Json> {
    match read_json(storage, path, what, warnings)? {
        object @ Json::Object(_) => Some(object),
        _ => {
            warnings.push(
                Warning::error(
                    "invalid_result",
                    format!("the {what} is not a JSON object; the run is left out"),
                )
                .file(path),
            );
            None
        }
    }
}

/// A file that holds one JSON document, or `None` with a warning naming the file (and the line of a syntax
/// error): `what` names the document in the message.
pub(crate) fn read_json(
    storage: &dyn Storage,
    path: &str,
    what: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Json> {
    let bytes = read_file(storage, path, warnings)?;
    match json::parse(&bytes) {
        Ok(document) => Some(document),
        Err(error) => {
            warnings.push(
                Warning::error(
                    "invalid_json",
                    format!(
                        "the {what} is not valid JSON ({}); the run is left out",
                        error.message
                    ),
                )
                .file(path)
                .line(error.line),
            );
            None
        }
    }
}

/// The first [`HEAD_BYTES`] of a file under `data/fixtures/formats`, as detection sees them.
#[cfg(test)]
pub(crate) fn fixture_head(relative: &str) -> Vec<u8> {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../data/fixtures/formats")
            .join(relative),
    )
    .expect("fixture file");
    bytes[..bytes.len().min(HEAD_BYTES as usize)].to_vec()
}

/// A top-level document as a format reads it: a [`Json`] tree, or a typed reader of the format's objects.
pub(crate) trait Document: serde::de::DeserializeOwned {
    /// Whether the document is a JSON object (the others are reported and left out).
    fn is_object(&self) -> bool;
}

impl Document for Json {
    fn is_object(&self) -> bool {
        self.is_object()
    }
}

impl Document for parallel::ResultObject {
    fn is_object(&self) -> bool {
        self.is_object
    }
}

/// The objects of a file holding one or several (appended runs, JSON Lines) as `(record index, line, object)`.
/// A document that is not an object, or not valid JSON, is left out with a warning at its line, named by
/// `label(record index, line)`; the file's other documents are still read.
pub(crate) fn read_objects<T: Document>(
    storage: &dyn Storage,
    path: &str,
    label: impl Fn(u32, u64) -> String,
    warnings: &mut Vec<Warning>,
) -> Vec<(u32, u64, T)> {
    let Some(bytes) = read_file(storage, path, warnings) else {
        return Vec::new();
    };
    objects_in(&bytes, path, label, warnings)
}

/// [`read_objects`] of a file already read.
pub(crate) fn objects_in<T: Document>(
    bytes: &[u8],
    path: &str,
    label: impl Fn(u32, u64) -> String,
    warnings: &mut Vec<Warning>,
) -> Vec<(u32, u64, T)> {
    let mut objects = Vec::new();
    for (index, (line, document)) in json::documents::<T>(bytes).into_iter().enumerate() {
        let record = index as u32;
        match document {
            Ok(object) if object.is_object() => objects.push((record, line, object)),
            Ok(_) => warnings.push(
                Warning::error(
                    "invalid_result",
                    format!("{} is not a JSON object; it is left out", label(record, line)),
                )
                .file(path)
                .line(line),
            ),
            Err(error) => warnings.push(
                Warning::error(
                    "invalid_json",
                    format!(
                        "{} is not valid JSON ({}); it is left out, the file's other records are read",
                        label(record, line),
                        error.message
                    ),
                )
                .file(path)
                .line(error.line),
            ),
        }
    }
    objects
}
