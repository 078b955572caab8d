//! The claims a `REFILL_NOTE.md` makes, checked against the files: checksum prefixes of the original master (kept
//! as the pre-refill backup), the refill run and the spliced master, and the counts of replaced rows, refilled
//! cells and the refill's ok rows. A note is prose written by a person, so the reading is deliberately narrow:
//! a value becomes a claim only where the note says what it is about, and anything it cannot attribute is left
//! out or said to be uncheckable rather than guessed at and flagged.

use super::{Part, thousands};
use crate::api::{FileDigest, RefillFacts, RunFacts};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Which checksum a note quotes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HashAlgorithm {
    /// An MD5 checksum, which the second indexing stage computes.
    Md5,
    /// A SHA-256 checksum, which the second indexing stage computes.
    Sha256,
    /// Named by the note but not computed by cellscope (`sha1`, `sha512`).
    Other(String),
    /// Not named: compared with both md5 and sha256.
    Unnamed,
}

/// The file a quoted checksum belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteFile {
    /// The master's metrics.csv before the splice: what the pre-refill backup keeps.
    OriginalMaster,
    /// The refill run's metrics.csv.
    RefillRun,
    /// The master's metrics.csv after the splice: the file as it is now.
    SplicedMaster,
    /// The note does not say which file.
    Unnamed,
}

/// What a claim is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClaimKind {
    /// A checksum (or its prefix) of a file.
    Hash {
        /// The checksum the note names, or that it names none.
        algorithm: HashAlgorithm,
        /// The file the note says the checksum is of.
        file: NoteFile,
    },
    /// Rows the splice replaced, with the status they had when the note gives one.
    ReplacedRows {
        /// The status the replaced rows had (`http_400`), when the note gives one.
        status: Option<String>,
    },
    /// Cells the refill covered.
    RefilledCells,
    /// Ok rows the refill run produced (`3,780 ok rows`, `3780 / 3,780 ok`).
    RefillOkRows,
}

/// What checking a claim found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// What the files say agrees with the note's value.
    Matches,
    /// What the files say differs from the note's value.
    Mismatch,
    /// The note says the value was not recorded.
    NotRecorded,
    /// Nothing to check against (yet): checksums not computed, no backup, the refill run absent.
    CannotCheck,
}

impl Verdict {
    /// The stable name (`data-verdict` in the app, the JSON value).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Matches => "matches",
            Verdict::Mismatch => "mismatch",
            Verdict::NotRecorded => "not_recorded",
            Verdict::CannotCheck => "cannot_check",
        }
    }
}

/// One claim of a note and what the files say.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteClaim {
    /// 1-based line of the note where the claimed value is written.
    pub line: u64,
    /// That line as written, trimmed.
    pub text: String,
    /// What the claim is about: a checksum of which file, or which count.
    pub kind: ClaimKind,
    /// The value as the note writes it (`5fd15755...`, `3,780`, `3780 / 3,780`), or `not recorded`.
    pub claimed: String,
    /// What the files say (a full checksum, a count), when there is something to compare with.
    pub found: Option<String>,
    /// Where `found` comes from (a file relative to the data root, the backup comparison, a run).
    pub source: Option<String>,
    /// Why a claim cannot be checked.
    pub why: Option<String>,
    /// Whether the files bear out `claimed`, and if they cannot, why not.
    pub verdict: Verdict,
}

impl NoteClaim {
    /// What the claim is about: `md5 of the original master's metrics.csv`, `http_400 rows replaced`, ….
    pub fn what(&self) -> String {
        match &self.kind {
            ClaimKind::Hash { algorithm, file } => {
                let algorithm = match algorithm {
                    HashAlgorithm::Md5 => "md5",
                    HashAlgorithm::Sha256 => "sha256",
                    HashAlgorithm::Other(name) => name.as_str(),
                    HashAlgorithm::Unnamed => "checksum",
                };
                let file = match file {
                    NoteFile::OriginalMaster => "the original master's metrics.csv",
                    NoteFile::RefillRun => "the refill run's metrics.csv",
                    NoteFile::SplicedMaster => "the spliced master's metrics.csv",
                    NoteFile::Unnamed => "a file the note does not name",
                };
                format!("{algorithm} of {file}")
            }
            ClaimKind::ReplacedRows {
                status: Some(status),
            } => format!("{status} rows replaced"),
            ClaimKind::ReplacedRows { status: None } => "rows replaced".to_string(),
            ClaimKind::RefilledCells => "cells refilled".to_string(),
            ClaimKind::RefillOkRows => "ok rows of the refill".to_string(),
        }
    }

    /// The claim's line in the audit: `note line 31: md5 of …: 5fd15755... — MISMATCH (path: 1cb9…)`. Checksums are
    /// code parts.
    pub fn parts(&self) -> Vec<Part> {
        let verbatim = |text: &str| match self.kind {
            ClaimKind::Hash { .. } => Part::Code(text.to_string()),
            _ => Part::Text(text.to_string()),
        };
        let mut parts = vec![Part::Text(format!(
            "note line {}: {}: ",
            self.line,
            self.what()
        ))];
        let evidence = |parts: &mut Vec<Part>| {
            if let Some(found) = &self.found {
                let source = self
                    .source
                    .as_deref()
                    .map(|source| format!("{source}: "))
                    .unwrap_or_default();
                parts.push(Part::Text(format!(" ({source}")));
                parts.push(verbatim(found));
                parts.push(Part::Text(")".to_string()));
            }
        };
        match self.verdict {
            Verdict::NotRecorded => {
                parts.push(Part::Text("not recorded".to_string()));
                evidence(&mut parts);
            }
            Verdict::CannotCheck => {
                parts.push(verbatim(&self.claimed));
                parts.push(Part::Text(format!(
                    " — cannot be checked: {}",
                    self.why.as_deref().unwrap_or("nothing to compare with")
                )));
            }
            Verdict::Matches | Verdict::Mismatch => {
                parts.push(verbatim(&self.claimed));
                parts.push(Part::Text(
                    if self.verdict == Verdict::Matches {
                        " — matches"
                    } else {
                        " — MISMATCH"
                    }
                    .to_string(),
                ));
                evidence(&mut parts);
            }
        }
        parts
    }
}

/// A value the note states, before it is checked.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stated {
    /// A checksum or its prefix, lower case.
    Hash(String),
    NotRecorded,
    Count {
        count: u64,
        of: Option<u64>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Parsed {
    line: u64,
    kind: ClaimKind,
    claimed: String,
    stated: Stated,
}

/// A paragraph, list item or heading-less run of lines: the unit a sentence (and so a claim) lives in.
struct Block {
    text: String,
    /// `(byte offset in text, 1-based line)` of each line's start.
    lines: Vec<(usize, u64)>,
    /// The heading in effect, lower case.
    heading: String,
}

impl Block {
    fn line_at(&self, offset: usize) -> u64 {
        self.lines
            .iter()
            .take_while(|(start, _)| *start <= offset)
            .last()
            .map_or(1, |(_, line)| *line)
    }
}

fn is_list_item(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    line.starts_with("- ")
        || line.starts_with("* ")
        || line.starts_with("+ ")
        || (digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") ")))
}

fn blocks(note: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut heading = String::new();
    let mut current: Option<Block> = None;
    for (index, line) in note.lines().enumerate() {
        let number = index as u64 + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || is_list_item(trimmed) {
            blocks.extend(current.take());
        }
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with('#') {
            heading = trimmed.to_ascii_lowercase();
            continue;
        }
        let block = current.get_or_insert_with(|| Block {
            text: String::new(),
            lines: Vec::new(),
            heading: heading.clone(),
        });
        if !block.text.is_empty() {
            block.text.push('\n');
        }
        block.lines.push((block.text.len(), number));
        block.text.push_str(trimmed);
    }
    blocks.extend(current);
    blocks
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

fn mentions_any(text: &str, words: &[&str]) -> bool {
    words.iter().any(|word| text.contains(word))
}

const HASH_WORDS: &[&str] = &["md5", "sha", "hash", "checksum"];
const NOT_RECORDED: &[&str] = &[
    "not recorded",
    "unrecorded",
    "not computed",
    "unknown",
    "n/a",
];
/// Words that put a count in a note's account of the refill (rather than, say, the size of the sweep).
const REFILL_WORDS: &[&str] = &["refill", "re-run", "rerun", "splice", "replace", "scope"];

/// The algorithm a stretch of text names, if any.
fn named_algorithm(text: &str) -> Option<HashAlgorithm> {
    [
        ("sha256", HashAlgorithm::Sha256),
        ("sha-256", HashAlgorithm::Sha256),
        ("sha512", HashAlgorithm::Other("sha512".into())),
        ("sha-512", HashAlgorithm::Other("sha512".into())),
        ("sha1", HashAlgorithm::Other("sha1".into())),
        ("sha-1", HashAlgorithm::Other("sha1".into())),
        ("md5", HashAlgorithm::Md5),
    ]
    .into_iter()
    .filter_map(|(name, algorithm)| text.find(name).map(|at| (at, algorithm)))
    .min_by_key(|(at, _)| *at)
    .map(|(_, algorithm)| algorithm)
}

/// The file a label (the words before a quoted value) names. "Original" and "backup" are tested first so that
/// "pre-refill master" is the original, then "spliced" so that "spliced master (with the refill rows)" is the
/// spliced one, then "refill". A bare "master" says neither before nor after the splice, so it names nothing.
fn named_file(label: &str) -> Option<NoteFile> {
    if mentions_any(
        label,
        &[
            "original",
            "backup",
            "pre-refill",
            "prerefill",
            "before",
            "pre-splice",
        ],
    ) {
        Some(NoteFile::OriginalMaster)
    } else if mentions_any(label, &["spliced", "post-splice", "post-refill", "current"]) {
        Some(NoteFile::SplicedMaster)
    } else if label.contains("refill") {
        Some(NoteFile::RefillRun)
    } else {
        None
    }
}

/// Hex runs of a block that read as checksums: `(start, end, the value as written with its ellipsis)`.
fn hash_tokens(text: &str) -> Vec<(usize, usize, String)> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        if !is_word_byte(bytes[start]) {
            start += 1;
            continue;
        }
        let end = start
            + bytes[start..]
                .iter()
                .take_while(|byte| is_word_byte(**byte))
                .count();
        let word = &text[start..end];
        let rest = text[end..].trim_start_matches('`');
        let ellipsis = ["...", "…"]
            .into_iter()
            .find(|mark| rest.starts_with(*mark));
        let has_digit = word.bytes().any(|byte| byte.is_ascii_digit());
        let has_letter = word.bytes().any(|byte| byte.is_ascii_alphabetic());
        // A checksum mixes digits and letters, is quoted as a prefix, or has a checksum's length; this keeps
        // English words (`decade`) and plain numbers out.
        if word.len() >= 6
            && word.bytes().all(|byte| byte.is_ascii_hexdigit())
            && ((has_digit && has_letter)
                || ellipsis.is_some()
                || matches!(word.len(), 32 | 40 | 64 | 128))
        {
            tokens.push((start, end, format!("{word}{}", ellipsis.unwrap_or(""))));
        }
        start = end;
    }
    tokens
}

fn hash_claims(block: &Block, parsed: &mut Vec<Parsed>) {
    let lower = block.text.to_ascii_lowercase();
    if !mentions_any(&lower, HASH_WORDS) && !mentions_any(&block.heading, HASH_WORDS) {
        return;
    }
    let tokens = hash_tokens(&block.text);
    let mut previous_end = 0;
    let mut previous_file = None;
    for (start, end, claimed) in &tokens {
        // The words since the previous value name this value's file; none ("local `a…` / pod `b…`") means the
        // same file as the previous value.
        let label = &lower[previous_end..*start];
        let file = named_file(label)
            .or(previous_file)
            .unwrap_or(NoteFile::Unnamed);
        let word = &lower[*start..*end];
        let algorithm = named_algorithm(label)
            .or_else(|| named_algorithm(&lower))
            .or_else(|| named_algorithm(&block.heading))
            .unwrap_or(match word.len() {
                32 => HashAlgorithm::Md5,
                40 => HashAlgorithm::Other("sha1".into()),
                64 => HashAlgorithm::Sha256,
                128 => HashAlgorithm::Other("sha512".into()),
                _ => HashAlgorithm::Unnamed,
            });
        parsed.push(Parsed {
            line: block.line_at(*start),
            kind: ClaimKind::Hash { algorithm, file },
            claimed: claimed.clone(),
            stated: Stated::Hash(word.to_string()),
        });
        previous_end = *end;
        previous_file = Some(file);
    }
    if tokens.is_empty()
        && let Some(at) = NOT_RECORDED
            .iter()
            .filter_map(|phrase| lower.find(phrase))
            .min()
        && let Some(file) = named_file(&lower[..at])
    {
        parsed.push(Parsed {
            line: block.line_at(at),
            kind: ClaimKind::Hash {
                algorithm: named_algorithm(&lower[..at])
                    .or_else(|| named_algorithm(&block.heading))
                    .unwrap_or(HashAlgorithm::Unnamed),
                file,
            },
            claimed: "not recorded".to_string(),
            stated: Stated::NotRecorded,
        });
    }
}

/// A number with optional thousands separators starting at `start`, not part of a word, a decimal, a time or a
/// ratio's second half: `(value, end)`.
fn number_at(text: &str, start: usize) -> Option<(u64, usize)> {
    let bytes = text.as_bytes();
    if !bytes.get(start)?.is_ascii_digit() {
        return None;
    }
    if start > 0 && (is_word_byte(bytes[start - 1]) || b".,=~-/+:".contains(&bytes[start - 1])) {
        return None;
    }
    let digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count()
    };
    let mut end = start + digits(start);
    while bytes.get(end) == Some(&b',') && digits(end + 1) == 3 {
        end += 4;
    }
    let next = bytes.get(end).copied();
    let after = bytes.get(end + 1).copied();
    if next.is_some_and(is_word_byte)
        || (matches!(next, Some(b'.' | b':')) && after.is_some_and(|byte| byte.is_ascii_digit()))
    {
        return None;
    }
    let value = text[start..end].replace(',', "").parse().ok()?;
    Some((value, end))
}

/// The next word after `from` (spaces, backticks and emphasis skipped): `(word, end)`.
fn next_word(text: &str, from: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    let mut start = from;
    while bytes
        .get(start)
        .is_some_and(|byte| byte.is_ascii_whitespace() || matches!(byte, b'`' | b'*'))
    {
        start += 1;
    }
    let end = start
        + bytes[start..]
            .iter()
            .take_while(|byte| is_word_byte(**byte) || **byte == b'-')
            .count();
    (end > start).then(|| (&text[start..end], end))
}

fn skip_spaces(text: &str, from: usize) -> usize {
    from + text[from..]
        .bytes()
        .take_while(u8::is_ascii_whitespace)
        .count()
}

/// A row status that is not ok: one the files hold, or an `http_NNN`.
fn is_failure_status(word: &str, statuses: &BTreeSet<String>) -> bool {
    statuses.contains(word)
        || word
            .strip_prefix("http_")
            .is_some_and(|code| !code.is_empty() && code.bytes().all(|byte| byte.is_ascii_digit()))
}

fn is_rows(word: &str) -> bool {
    matches!(word, "rows" | "row" | "requests" | "request")
}

fn count_claims(block: &Block, statuses: &BTreeSet<String>, parsed: &mut Vec<Parsed>) {
    let lower = block.text.to_ascii_lowercase();
    // The block's failure status, for counts that say it elsewhere in the sentence ("3,780 requests … returned
    // `http_400`").
    let block_status = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|word| is_failure_status(word, statuses))
        .map(str::to_string);
    let mut rows = Vec::new();
    let mut cells = Vec::new();
    let mut start = 0;
    while start < lower.len() {
        let Some((count, end)) = number_at(&lower, start) else {
            start += 1;
            continue;
        };
        let line = block.line_at(start);
        let written = |until: usize| block.text[start..until].to_string();
        // `3780 / 3,780 ok`: ok rows of all rows.
        let slash = skip_spaces(&lower, end);
        if lower[slash..].starts_with('/')
            && let Some((of, of_end)) = number_at(&lower, skip_spaces(&lower, slash + 1))
            && next_word(&lower, of_end).is_some_and(|(word, _)| word == "ok")
        {
            rows.push(Parsed {
                line,
                kind: ClaimKind::RefillOkRows,
                claimed: written(of_end),
                stated: Stated::Count {
                    count,
                    of: Some(of),
                },
            });
            start = of_end;
            continue;
        }
        let claim = |kind| Parsed {
            line,
            kind,
            claimed: written(end),
            stated: Stated::Count { count, of: None },
        };
        match next_word(&lower, end) {
            Some(("cells" | "cell", _)) => cells.push(claim(ClaimKind::RefilledCells)),
            Some((word, word_end)) if is_rows(word) => {
                if let Some(status) = &block_status {
                    rows.push(claim(ClaimKind::ReplacedRows {
                        status: Some(status.clone()),
                    }));
                } else if lower.contains("replace") {
                    rows.push(claim(ClaimKind::ReplacedRows { status: None }));
                }
                start = word_end;
                continue;
            }
            Some((word, word_end))
                if next_word(&lower, word_end).is_some_and(|(noun, _)| is_rows(noun)) =>
            {
                if word == "ok" {
                    rows.push(claim(ClaimKind::RefillOkRows));
                } else if is_failure_status(word, statuses) {
                    rows.push(claim(ClaimKind::ReplacedRows {
                        status: Some(word.to_string()),
                    }));
                }
            }
            _ => {}
        }
        start = end;
    }
    // Counts count as claims about the refill only where the note is telling about it: the block or its section
    // mentions the refill, or the block is about the failed rows. A sweep's size elsewhere is not a claim.
    let about_refill = mentions_any(&lower, REFILL_WORDS)
        || mentions_any(&block.heading, REFILL_WORDS)
        || block_status.is_some();
    if about_refill {
        parsed.extend(rows);
        parsed.extend(cells);
    }
}

fn parse(note: &str, statuses: &BTreeSet<String>) -> Vec<Parsed> {
    let mut parsed = Vec::new();
    for block in blocks(note) {
        hash_claims(&block, &mut parsed);
        count_claims(&block, statuses, &mut parsed);
    }
    crate::order::sort_stable_by_key(&mut parsed, |claim| claim.line);
    parsed
}

/// What checking one stated value found.
struct Finding {
    found: Option<String>,
    source: Option<String>,
    why: Option<String>,
    verdict: Verdict,
}

impl Finding {
    fn cannot(why: &str) -> Finding {
        Finding {
            found: None,
            source: None,
            why: Some(why.to_string()),
            verdict: Verdict::CannotCheck,
        }
    }

    fn compared(found: String, source: String, agrees: bool) -> Finding {
        Finding {
            found: Some(found),
            source: Some(source),
            why: None,
            verdict: if agrees {
                Verdict::Matches
            } else {
                Verdict::Mismatch
            },
        }
    }
}

/// What the claims are checked against: the master, its refill facts and refill runs, and whether the second
/// indexing stage is in.
struct Facts<'a> {
    master: &'a RunFacts,
    refill: &'a RefillFacts,
    refill_runs: Vec<&'a RunFacts>,
    complete: bool,
}

impl Facts<'_> {
    fn hash(&self, stated: &Stated, algorithm: &HashAlgorithm, file: NoteFile) -> Finding {
        let files: Vec<&FileDigest> = match file {
            NoteFile::OriginalMaster => self
                .master
                .backups
                .iter()
                .map(|backup| &backup.metrics)
                .collect(),
            NoteFile::RefillRun => self.refill_runs.iter().map(|run| &run.metrics).collect(),
            NoteFile::SplicedMaster => vec![&self.master.metrics],
            NoteFile::Unnamed => Vec::new(),
        };
        let mut finding = self.digests(stated, algorithm, file, &files);
        // A value the note does not record stays "not recorded", with what the file is now when that is known.
        if *stated == Stated::NotRecorded {
            finding.verdict = Verdict::NotRecorded;
        }
        finding
    }

    fn digests(
        &self,
        stated: &Stated,
        algorithm: &HashAlgorithm,
        file: NoteFile,
        files: &[&FileDigest],
    ) -> Finding {
        if files.is_empty() {
            return Finding::cannot(match file {
                NoteFile::OriginalMaster => "no backup of the original master is kept",
                NoteFile::RefillRun => "the refill run is not under the data root",
                _ => "the note does not say which file it is",
            });
        }
        let digests = |file: &FileDigest| match algorithm {
            HashAlgorithm::Md5 => vec![file.md5.clone()],
            HashAlgorithm::Sha256 => vec![file.sha256.clone()],
            HashAlgorithm::Unnamed => vec![file.md5.clone(), file.sha256.clone()],
            HashAlgorithm::Other(_) => Vec::new(),
        };
        if let HashAlgorithm::Other(name) = algorithm {
            return Finding::cannot(&format!("cellscope computes md5 and sha256, not {name}"));
        }
        let known: Vec<(&FileDigest, String)> = files
            .iter()
            .flat_map(|file| {
                digests(file)
                    .into_iter()
                    .flatten()
                    .map(move |digest| (*file, digest))
            })
            .collect();
        let Some(first) = known.first() else {
            return Finding::cannot(if self.complete {
                "no checksum was computed for it"
            } else {
                "checksums are not computed yet"
            });
        };
        // Any candidate that starts with the prefix (several backups, or md5 and sha256 when the note does not
        // say which) makes a match; a mismatch shows the first candidate.
        let matching = match stated {
            Stated::Hash(prefix) => known
                .iter()
                .find(|(_, digest)| digest.to_ascii_lowercase().starts_with(prefix.as_str())),
            _ => None,
        };
        let (file, digest) = matching.unwrap_or(first);
        Finding::compared(digest.clone(), file.path.clone(), matching.is_some())
    }

    fn replaced_rows(&self, status: Option<&str>, count: u64) -> Finding {
        let diffs: Vec<_> = self
            .master
            .backups
            .iter()
            .map(|backup| backup.diff.as_ref())
            .collect();
        if diffs.is_empty() {
            return Finding::cannot("no backup to compare with");
        }
        if diffs.iter().any(Option::is_none) {
            return Finding::cannot(if self.complete {
                "the backup could not be compared with the master"
            } else {
                "the backup comparison is not computed yet"
            });
        }
        let replaced: u64 = diffs
            .iter()
            .flatten()
            .map(|diff| match status {
                Some(status) => diff
                    .replaced_backup_status
                    .iter()
                    .filter(|(name, _)| name.eq_ignore_ascii_case(status))
                    .map(|(_, count)| count)
                    .sum(),
                None => diff.replaced_rows,
            })
            .sum();
        Finding::compared(
            thousands(replaced),
            "the backup comparison".to_string(),
            replaced == count,
        )
    }

    fn refilled_cells(&self, count: u64) -> Finding {
        let cells = u64::from(self.refill.refilled_cells);
        Finding::compared(
            thousands(cells),
            "this run's refill".to_string(),
            cells == count,
        )
    }

    fn ok_rows(&self, count: u64, of: Option<u64>) -> Finding {
        if self.refill_runs.is_empty() {
            return Finding::cannot("the refill run is not under the data root");
        }
        let ok: u64 = self.refill_runs.iter().map(|run| run.census.ok_rows).sum();
        let rows: u64 = self.refill_runs.iter().map(|run| run.census.rows).sum();
        let found = match of {
            Some(_) => format!("{} / {}", thousands(ok), thousands(rows)),
            None => thousands(ok),
        };
        let runs: Vec<&str> = self
            .refill_runs
            .iter()
            .map(|run| run.run_id.as_str())
            .collect();
        Finding::compared(
            found,
            format!("run {}", runs.join(", ")),
            ok == count && of.is_none_or(|of| of == rows),
        )
    }

    fn check(&self, kind: &ClaimKind, stated: &Stated) -> Finding {
        match (kind, stated) {
            (ClaimKind::Hash { algorithm, file }, stated) => self.hash(stated, algorithm, *file),
            (ClaimKind::ReplacedRows { status }, Stated::Count { count, .. }) => {
                self.replaced_rows(status.as_deref(), *count)
            }
            (ClaimKind::RefilledCells, Stated::Count { count, .. }) => self.refilled_cells(*count),
            (ClaimKind::RefillOkRows, Stated::Count { count, of }) => self.ok_rows(*count, *of),
            // `parse` states counts for counting claims only; nothing else reaches here.
            _ => Finding::cannot("unreadable claim"),
        }
    }
}

/// Reads the claims of `master`'s `REFILL_NOTE.md` and checks each against the files: checksums against the
/// backup (the original master), the refill runs' and the master's metrics.csv; replaced rows against the backup
/// comparison; refilled cells against the master's refill; ok rows against the refill runs' census. `runs` are
/// all runs of the index (the refill runs are looked up there); `complete` says whether checksums and backup
/// comparisons have been computed (the server's second stage), so that their absence reads as "not yet".
/// Empty when the run has no note.
pub fn check_refill_note(master: &RunFacts, runs: &[RunFacts], complete: bool) -> Vec<NoteClaim> {
    let Some(refill) = &master.refill else {
        return Vec::new();
    };
    let Some(note) = &refill.note else {
        return Vec::new();
    };
    // Statuses the files hold, so that a note's `timeout rows` is read as a status as well as `http_400 rows`.
    let statuses: BTreeSet<String> = crate::order::btree_set(
        master
            .census
            .failed_by_status
            .keys()
            .chain(
                master
                    .backups
                    .iter()
                    .filter_map(|backup| backup.diff.as_ref())
                    .flat_map(|diff| diff.replaced_backup_status.keys()),
            )
            .map(|status| status.to_ascii_lowercase()),
    );
    let facts = Facts {
        master,
        refill,
        refill_runs: refill
            .refill_runs
            .iter()
            .filter_map(|id| runs.iter().find(|run| &run.run_id == id))
            .collect(),
        complete,
    };
    let lines: Vec<&str> = note.lines().collect();
    parse(note, &statuses)
        .into_iter()
        .map(|parsed| {
            let finding = facts.check(&parsed.kind, &parsed.stated);
            let text = usize::try_from(parsed.line)
                .ok()
                .and_then(|line| lines.get(line.checked_sub(1)?))
                .map(|line| line.trim().to_string())
                .unwrap_or_default();
            NoteClaim {
                line: parsed.line,
                text,
                kind: parsed.kind,
                claimed: parsed.claimed,
                found: finding.found,
                source: finding.source,
                why: finding.why,
                verdict: finding.verdict,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{BackupComparison, BackupFacts, Census, RefillFacts, RunRole};
    use crate::audit::join_parts;

    /// The demo data's note, as `cellscope-demo` writes it (`data/demo/tr164-v3/20260612_212816_266127/`).
    const DEMO_NOTE: &str = r#"# Refill note: Mistral-7B x long_prefill_8k (SGLang)

The master metrics.csv of run `20260612_212816_266127` was spliced on 2026-06-13T06:33:28+00:00 with the rows of the targeted refill run
`20260613_055519_963364` (`results/20260613_055519_963364/`).

## Why

All 3,780 requests of Mistral-7B x long_prefill_8k (36 cells: 6 N x 3 reps x 2 phases, N=1..32) returned
`http_400` in the original run: the char-matched ~8,704-token prompts tokenize to up to ~10,039 tokens under the
HF AutoTokenizer, above the `default_max_model_len` ceiling of 8768 (8,704 prompt-high + 64 max-new).
The cell-level manifest still reported 900/900 complete because the rows were written.

## Refill

- Scope: mistral-7b x long_prefill_8k only, both phases, all N and reps (36 cells).
- Override: `default_max_model_len: 8768 -> 11264` (`config_mistral_refill.yaml`); otherwise identical
  to `config_cloud_5model_3rep.yaml`. The ceiling governs admission, not execution.
- Result: 3780 / 3,780 ok, including N=32 at 320/320.

## Splice

- The 3,780 `http_400` rows of the master were replaced **in place** (same positions, same cell keys, same
  count per cell) by the 3,780 ok rows; the spliced rows keep the refill run id `20260613_055519_963364`.
- Every other row is unchanged.
- The pre-refill state is preserved untouched in `results/20260612_212816_266127_BACKUP_preRefill/`.
- `analysis.json` and `cell_summary.csv` were regenerated from the spliced master.

## Hashes (md5, local = pod)

- original master metrics.csv: `5fd15755...`
- refill metrics.csv: `e0400837...`
- spliced master: not recorded.

(Hash prefixes are the documented values of TR164 V3; this demo tree's files do not hash to them.)
"#;

    const MASTER: &str = "20260612_212816_266127";
    const REFILL: &str = "20260613_055519_963364";

    fn digest(path: &str, md5: Option<&str>) -> FileDigest {
        FileDigest {
            path: path.to_string(),
            bytes: 1,
            md5: md5.map(str::to_string),
            sha256: md5.map(|md5| format!("{md5}{md5}")),
        }
    }

    fn run(id: &str, md5: Option<&str>) -> RunFacts {
        RunFacts {
            run_id: id.to_string(),
            path: format!("tr164-v3/{id}"),
            role: RunRole::Run,
            refill_of: None,
            copy_of: None,
            manifest_status: Some("complete".into()),
            has_plan: true,
            census: Census::default(),
            metrics: digest(&format!("tr164-v3/{id}/metrics.csv"), md5),
            files: Vec::new(),
            refill: None,
            backups: Vec::new(),
            exclusions: Default::default(),
            suites: Vec::new(),
            environment: Default::default(),
            inferred: Vec::new(),
            started: None,
        }
    }

    /// The demo's master, refill run and backup as the index describes them (`complete`: hashes and comparison
    /// in) or before the second stage (`None` checksums and comparison).
    fn demo_runs(note: &str, complete: bool) -> Vec<RunFacts> {
        let hash = |value: &'static str| complete.then_some(value);
        let mut master = run(MASTER, hash("20bbdcbba6022a31831f15302c404b61"));
        master.refill = Some(RefillFacts {
            refill_runs: vec![REFILL.to_string()],
            refilled_cells: 36,
            refill_rows: 3780,
            note: Some(note.to_string()),
        });
        master.backups = vec![BackupFacts {
            path: format!("tr164-v3/{MASTER}_BACKUP_preRefill"),
            label: "preRefill".into(),
            metrics: digest(
                &format!("tr164-v3/{MASTER}_BACKUP_preRefill/metrics.csv"),
                hash("1cb9f62257094bb74314cabfe1ae7cb3"),
            ),
            diff: complete.then(|| BackupComparison {
                master_rows: 94_500,
                backup_rows: 94_500,
                replaced_rows: 3780,
                replaced_backup_status: [("http_400".to_string(), 3780)].into_iter().collect(),
                replacement_run_ids: [(REFILL.to_string(), 3780)].into_iter().collect(),
                ..BackupComparison::default()
            }),
        }];
        let mut refill = run(REFILL, hash("a8d5e7efe500e850aa76c41cc131edfd"));
        refill.role = RunRole::Refill;
        refill.refill_of = Some(MASTER.to_string());
        refill.census.rows = 3780;
        refill.census.ok_rows = 3780;
        vec![master, refill]
    }

    fn summary(claims: &[NoteClaim]) -> Vec<(u64, String, &'static str)> {
        claims
            .iter()
            .map(|claim| (claim.line, claim.claimed.clone(), claim.verdict.as_str()))
            .collect()
    }

    #[test]
    fn the_demo_note_claims_are_read_with_their_lines() {
        let runs = demo_runs(DEMO_NOTE, true);
        let claims = check_refill_note(&runs[0], &runs, true);
        let kinds: Vec<(u64, ClaimKind)> = claims
            .iter()
            .map(|claim| (claim.line, claim.kind.clone()))
            .collect();
        let http_400 = || ClaimKind::ReplacedRows {
            status: Some("http_400".into()),
        };
        let md5 = |file| ClaimKind::Hash {
            algorithm: HashAlgorithm::Md5,
            file,
        };
        assert_eq!(
            kinds,
            vec![
                (8, http_400()),
                (8, ClaimKind::RefilledCells),
                (15, ClaimKind::RefilledCells),
                (18, ClaimKind::RefillOkRows),
                (22, http_400()),
                (23, ClaimKind::RefillOkRows),
                (30, md5(NoteFile::OriginalMaster)),
                (31, md5(NoteFile::RefillRun)),
                (32, md5(NoteFile::SplicedMaster)),
            ]
        );
        assert_eq!(
            claims[6].text,
            "- original master metrics.csv: `5fd15755...`"
        );
    }

    #[test]
    fn counts_match_and_the_documented_hash_prefixes_do_not() {
        let runs = demo_runs(DEMO_NOTE, true);
        let claims = check_refill_note(&runs[0], &runs, true);
        assert_eq!(
            summary(&claims),
            vec![
                (8, "3,780".into(), "matches"),
                (8, "36".into(), "matches"),
                (15, "36".into(), "matches"),
                (18, "3780 / 3,780".into(), "matches"),
                (22, "3,780".into(), "matches"),
                (23, "3,780".into(), "matches"),
                (30, "5fd15755...".into(), "mismatch"),
                (31, "e0400837...".into(), "mismatch"),
                (32, "not recorded".into(), "not_recorded"),
            ]
        );
        // The mismatch names the file and what it hashes to; "not recorded" says what the file is now.
        assert_eq!(
            join_parts(&claims[6].parts()),
            "note line 30: md5 of the original master's metrics.csv: 5fd15755... — MISMATCH \
             (tr164-v3/20260612_212816_266127_BACKUP_preRefill/metrics.csv: 1cb9f62257094bb74314cabfe1ae7cb3)"
        );
        assert_eq!(claims[6].parts()[1], Part::Code("5fd15755...".into()));
        assert_eq!(
            join_parts(&claims[8].parts()),
            "note line 32: md5 of the spliced master's metrics.csv: not recorded \
             (tr164-v3/20260612_212816_266127/metrics.csv: 20bbdcbba6022a31831f15302c404b61)"
        );
        assert_eq!(
            join_parts(&claims[4].parts()),
            "note line 22: http_400 rows replaced: 3,780 — matches (the backup comparison: 3,780)"
        );
        assert_eq!(
            join_parts(&claims[3].parts()),
            "note line 18: ok rows of the refill: 3780 / 3,780 — matches (run 20260613_055519_963364: 3,780 / 3,780)"
        );
    }

    #[test]
    fn each_contradicted_claim_is_a_warning_of_the_run_on_its_line_and_nothing_else_is() {
        let runs = demo_runs(DEMO_NOTE, true);
        let claims = check_refill_note(&runs[0], &runs, true);
        let warnings = crate::audit::note_warnings(&runs[0], &claims);
        let placed: Vec<String> = warnings
            .iter()
            .map(|warning| {
                format!(
                    "{} {:?} {:?} {:?}",
                    warning.kind, warning.run, warning.file, warning.line
                )
            })
            .collect();
        let at = |line: u64| {
            format!(
                "refill_note_mismatch Some({MASTER:?}) Some(\"tr164-v3/{MASTER}/REFILL_NOTE.md\") Some({line})"
            )
        };
        assert_eq!(placed, [at(30), at(31)]);
        assert_eq!(
            warnings[0].message,
            "a claim of REFILL_NOTE.md does not hold: md5 of the original master's metrics.csv: the note says \
             5fd15755...; found 1cb9f62257094bb74314cabfe1ae7cb3 in \
             tr164-v3/20260612_212816_266127_BACKUP_preRefill/metrics.csv"
        );
        // Before the checksums are in, nothing is contradicted yet; a note whose claims all hold gives none.
        let early = demo_runs(DEMO_NOTE, false);
        let early_claims = check_refill_note(&early[0], &early, false);
        assert!(crate::audit::note_warnings(&early[0], &early_claims).is_empty());
        let right = DEMO_NOTE
            .replace("`5fd15755...`", "`1cb9f622...`")
            .replace("`e0400837...`", "`a8d5e7ef...`");
        let fixed = demo_runs(&right, true);
        let fixed_claims = check_refill_note(&fixed[0], &fixed, true);
        assert!(crate::audit::note_warnings(&fixed[0], &fixed_claims).is_empty());
    }

    #[test]
    fn a_prefix_of_the_real_checksum_matches_in_either_case_and_a_wrong_count_is_flagged() {
        let note = DEMO_NOTE
            .replace("`5fd15755...`", "`1CB9F622…`")
            .replace("`e0400837...`", "a8d5e7efe500e850aa76c41cc131edfd")
            .replace("(36 cells)", "(35 cells)");
        let runs = demo_runs(&note, true);
        let claims = check_refill_note(&runs[0], &runs, true);
        let verdicts = summary(&claims);
        assert!(
            verdicts.contains(&(30, "1CB9F622…".into(), "matches")),
            "{verdicts:?}"
        );
        assert!(
            verdicts.contains(&(31, "a8d5e7efe500e850aa76c41cc131edfd".into(), "matches")),
            "{verdicts:?}"
        );
        assert!(
            verdicts.contains(&(15, "35".into(), "mismatch")),
            "{verdicts:?}"
        );
        assert_eq!(
            join_parts(&claims[2].parts()),
            "note line 15: cells refilled: 35 — MISMATCH (this run's refill: 36)"
        );
    }

    #[test]
    fn before_the_second_stage_hashes_and_replaced_rows_cannot_be_checked_yet() {
        let runs = demo_runs(DEMO_NOTE, false);
        let claims = check_refill_note(&runs[0], &runs, false);
        let verdicts = summary(&claims);
        assert_eq!(verdicts[0], (8, "3,780".into(), "cannot_check"));
        assert_eq!(verdicts[1], (8, "36".into(), "matches"));
        assert_eq!(verdicts[6], (30, "5fd15755...".into(), "cannot_check"));
        assert_eq!(verdicts[8], (32, "not recorded".into(), "not_recorded"));
        assert_eq!(
            join_parts(&claims[6].parts()),
            "note line 30: md5 of the original master's metrics.csv: 5fd15755... — cannot be checked: \
             checksums are not computed yet"
        );
    }

    #[test]
    fn values_the_note_does_not_attribute_are_not_flagged() {
        let note = "# Note\n\n\
                    The sweep has 900 cells and 94,500 rows.\n\n\
                    ## Hashes\n\n\
                    - master metrics.csv: `deadbeef12`\n\
                    - sha1 of the refill: 0123456789abcdef0123456789abcdef01234567\n\
                    - a decade of facade work\n";
        let runs = demo_runs(note, true);
        let claims = check_refill_note(&runs[0], &runs, true);
        assert_eq!(
            summary(&claims),
            vec![
                (7, "deadbeef12".into(), "cannot_check"),
                (
                    8,
                    "0123456789abcdef0123456789abcdef01234567".into(),
                    "cannot_check"
                ),
            ]
        );
        assert_eq!(
            claims[0].why.as_deref(),
            Some("the note does not say which file it is")
        );
        assert_eq!(
            claims[1].why.as_deref(),
            Some("cellscope computes md5 and sha256, not sha1")
        );
    }

    #[test]
    fn a_run_without_a_note_has_no_claims() {
        let mut runs = demo_runs(DEMO_NOTE, true);
        if let Some(refill) = runs[0].refill.as_mut() {
            refill.note = None;
        }
        assert!(check_refill_note(&runs[0], &runs, true).is_empty());
        assert!(check_refill_note(&runs[1], &runs, true).is_empty());
    }

    #[test]
    fn claims_travel_as_json() {
        let runs = demo_runs(DEMO_NOTE, true);
        let claims = check_refill_note(&runs[0], &runs, true);
        let json = serde_json::to_value(&claims[6]).expect("serialises");
        assert_eq!(json["verdict"], "mismatch");
        assert_eq!(json["kind"]["kind"], "hash");
        assert_eq!(json["kind"]["file"], "original_master");
        let back: NoteClaim = serde_json::from_value(json).expect("deserialises");
        assert_eq!(back, claims[6]);
    }
}
