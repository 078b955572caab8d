//! Loads `exclusions.toml` ledgers and applies them to cells.

use crate::storage::Storage;
use cellscope_model::api::{LedgerEntry, Warning};
use cellscope_model::exclusions::ExclusionEntry;

fn line_of(text: &str, offset: usize) -> u64 {
    text.get(..offset)
        .map_or(1, |prefix| prefix.matches('\n').count() as u64 + 1)
}

/// The ledger as TOML sees it: each `[[exclude]]` entry kept as a value with its place in the file, so one
/// entry that does not fit the schema is refused alone, with its line, and the others still apply.
#[derive(serde::Deserialize)]
struct RawLedger {
    #[serde(default)]
    exclude: Vec<toml::Spanned<toml::Value>>,
}

/// Parses one ledger. A file that is not TOML (or whose `exclude` is not an array of tables) yields a warning and
/// no entries, so nothing is excluded by accident; an entry that does not fit the schema (a scope other than
/// `comparison` or `all`, `select` that is not a table, no id) is left out with a warning at its line.
pub(crate) fn load(
    text: &str,
    file: &str,
    applies_under: &str,
    warnings: &mut Vec<Warning>,
) -> Vec<LedgerEntry> {
    let ledger: RawLedger = match toml::from_str(text) {
        Ok(ledger) => ledger,
        Err(error) => {
            let mut warning = Warning::error(
                "invalid_exclusions",
                format!(
                    "cannot read the exclusion ledger: {}; expected [[exclude]] entries with id, select, scope \
                     (\"comparison\" or \"all\") and reason; no entry of this file is applied",
                    error.message()
                ),
            )
            .file(file);
            warning.line = error.span().map(|span| line_of(text, span.start));
            warnings.push(warning);
            return Vec::new();
        }
    };
    let mut entries = Vec::new();
    // TOML spans an array-of-tables entry by its `[[exclude]]` header only: its text runs to the next entry.
    let starts: Vec<usize> = ledger
        .exclude
        .iter()
        .map(|spanned| spanned.span().start)
        .collect();
    for (position, spanned) in ledger.exclude.into_iter().enumerate() {
        let span = spanned.span().start..starts.get(position + 1).copied().unwrap_or(text.len());
        let line = line_of(text, span.start);
        let value = spanned.into_inner();
        let id = value.get("id").and_then(toml::Value::as_str).map_or_else(
            || format!("number {}", position + 1),
            |id| format!("`{id}`"),
        );
        let entry: ExclusionEntry = match value.try_into() {
            Ok(entry) => entry,
            Err(error) => {
                // The entry's own text, read again on its own, places the error on the key at fault.
                let line = text
                    .get(span.clone())
                    .and_then(entry_error_offset)
                    .map_or(line, |offset| line_of(text, span.start + offset));
                warnings.push(
                    Warning::error(
                        "invalid_exclusion",
                        format!(
                            "exclusion entry {id} is left out: {}; expected id, select (a table of dimension \
                             = value or [values]), scope (\"comparison\" or \"all\") and reason. The file's other \
                             entries apply",
                            error.message().trim_end()
                        ),
                    )
                    .file(file)
                    .at_line(Some(line)),
                );
                continue;
            }
        };
        // An entry is named by its id (in the audit, in links that filter by it): one without is not applied.
        if entry.id.trim().is_empty() {
            warnings.push(
                Warning::error(
                    "invalid_exclusion",
                    format!(
                        "exclusion entry {} is left out: its id is empty; give it an id that names it (the audit \
                         and links refer to entries by id). The file's other entries apply",
                        position + 1
                    ),
                )
                .file(file)
                .at_line(Some(line)),
            );
            continue;
        }
        let unknown = entry.unknown_dimensions();
        if !unknown.is_empty() {
            warnings.push(
                Warning::error(
                    "unknown_exclusion_dimension",
                    format!(
                        "entry `{}` selects on {}, which is not a dimension (run, suite, phase, backend, model, \
                         workload, n, rep); the entry matches nothing",
                        entry.id,
                        unknown.join(", ")
                    ),
                )
                .file(file)
                .at_line(Some(line)),
            );
        }
        entries.push(LedgerEntry {
            entry,
            file: file.to_string(),
            applies_under: applies_under.to_string(),
            matched_cells: 0,
        });
    }
    entries
}

/// Where, in the text of one `[[exclude]]` entry (with or without its header line), its schema error lies.
fn entry_error_offset(entry_text: &str) -> Option<usize> {
    #[derive(serde::Deserialize)]
    struct One {
        #[allow(dead_code)]
        exclude: Vec<ExclusionEntry>,
    }
    let error = if entry_text.trim_start().starts_with("[[") {
        toml::from_str::<One>(entry_text).err()?
    } else {
        toml::from_str::<ExclusionEntry>(entry_text).err()?
    };
    error.span().map(|span| span.start)
}

/// Loads every ledger found by discovery (`(directory it applies under, path relative to the data root)`),
/// reporting unreadable files and ids used by more than one entry.
pub(crate) fn load_all(
    storage: &dyn Storage,
    ledgers: &[(String, String)],
    warnings: &mut Vec<Warning>,
) -> Vec<LedgerEntry> {
    let mut entries: Vec<LedgerEntry> = Vec::new();
    let mut texts: Vec<(String, String)> = Vec::new();
    for (applies_under, file) in ledgers {
        let file = file.clone();
        match read_text(storage, &file) {
            Ok(text) => {
                entries.extend(load(&text, &file, applies_under, warnings));
                texts.push((file, text));
            }
            Err(error) => warnings.push(crate::storage::unreadable_warning(&error, &file)),
        }
    }
    let mut seen: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for entry in &entries {
        let times = seen.entry(entry.entry.id.as_str()).or_default();
        *times += 1;
        if *times > 1 {
            // The line of this occurrence of the id in its file, for the reader to find it.
            let line = texts
                .iter()
                .find(|(file, _)| file == &entry.file)
                .and_then(|(_, text)| {
                    let quoted = format!("\"{}\"", entry.entry.id);
                    text.match_indices(&quoted)
                        .nth(*times - 1)
                        .or_else(|| text.match_indices(&quoted).last())
                        .map(|(offset, _)| line_of(text, offset))
                });
            warnings.push(
                Warning::warn(
                    "duplicate_exclusion_id",
                    format!(
                        "exclusion id `{}` is used by more than one entry; each entry still applies",
                        entry.entry.id
                    ),
                )
                .file(&entry.file)
                .at_line(line),
            );
        }
    }
    entries
}

/// A ledger's text; text that is not UTF-8 is refused as the standard library's reading of a file as text does.
fn read_text(storage: &dyn Storage, file: &str) -> std::io::Result<String> {
    String::from_utf8(storage.read(file)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Whether a run at `run_relative` lies under the ledger directory `applies_under`.
pub(crate) fn applies_to(applies_under: &str, run_relative: &str) -> bool {
    applies_under.is_empty()
        || run_relative == applies_under
        || run_relative
            .strip_prefix(applies_under)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_product_brief_example_loads() {
        let text = r#"
[[exclude]]
id = "mistral-long-prefill-tokenizer"
select = { model = "mistral-7b", workload = "long_prefill_8k" }  # omitted dimensions match everything
scope = "comparison"
reason = "mistral_common vs HF AutoTokenizer: 1.162x prompt-token ratio on char-matched prompts"
source = "TR164 V3 §15"
decided = "2026-06-13"
"#;
        let mut warnings = Vec::new();
        let entries = load(text, "exclusions.toml", "", &mut warnings);
        assert!(warnings.is_empty());
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].entry.id, "mistral-long-prefill-tokenizer");
    }

    #[test]
    fn a_bad_scope_is_reported_with_its_line() {
        let text = "[[exclude]]\nid = \"x\"\nscope = \"everything\"\n";
        let mut warnings = Vec::new();
        assert!(load(text, "exclusions.toml", "", &mut warnings).is_empty());
        assert_eq!(warnings[0].kind, "invalid_exclusion");
        assert_eq!(warnings[0].line, Some(3));
        // Not TOML at all: the file is refused as a whole, at the line of the syntax error.
        let mut warnings = Vec::new();
        assert!(load("[[exclude]]\nid = \n", "exclusions.toml", "", &mut warnings).is_empty());
        assert_eq!(warnings[0].kind, "invalid_exclusions");
        assert_eq!(warnings[0].line, Some(2));
    }

    #[test]
    fn ledgers_apply_to_their_subtree_only() {
        assert!(applies_to("", "tr164-v1/20260531_120428_552237"));
        assert!(applies_to("tr164-v3", "tr164-v3/20260612_204254_036590"));
        assert!(!applies_to(
            "tr164-v3",
            "tr164-v3-copy-002/20260613_204254_036590"
        ));
    }
}
