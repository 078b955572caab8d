//! What a format makes of a file offered to it ([`Verdict`]): it reads it, it knows it as a file its tool writes
//! beside a run's results, or it declines it and says why, with how near the file came to being one of its
//! own. The nearest format's reason is the `not_recognised` finding's, and `cellscope index --explain` lists all.

use crate::parse::json::{self, head_has_key};
use crate::run::found::Unread;

/// How near a declined file came to being one of a format's: the reason of the nearest format is the one shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Nearness {
    /// Not the kind of file the format reads (another extension, JSON where it reads a table, or the reverse).
    OtherKind,
    /// The kind of file it reads, with none of the keys or columns that make a file the format's.
    NoMarks,
    /// Some of them but not all, or all of them and one that rules the format out.
    SomeMarks,
}

impl Nearness {
    fn words(self) -> &'static str {
        match self {
            Nearness::OtherKind => "not its kind of file",
            Nearness::NoMarks => "none of its marks",
            Nearness::SomeMarks => "some of its marks",
        }
    }
}

/// What one format makes of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The format reads the file.
    Reads,
    /// A file the format's tool writes beside a run's results that is not a run of its own (a sweep's summary, a
    /// warm-up run, the same figures as CSV, the per-request file its summary reads): `what` it is, and the root
    /// of the run it belongs to, which must have been found for the file to be passed over in silence.
    SideFile {
        what: String,
        run_root: String,
        /// The format of the run it belongs to, when not the format that knows it (an InferenceX aggregate of a
        /// vLLM-format result beside it).
        of_format: Option<&'static str>,
    },
    /// The format does not read the file.
    Declines { nearness: Nearness, reason: String },
}

impl Verdict {
    pub(crate) fn reads(&self) -> bool {
        matches!(self, Verdict::Reads)
    }

    pub(crate) fn declines(nearness: Nearness, reason: impl Into<String>) -> Verdict {
        Verdict::Declines {
            nearness,
            reason: reason.into(),
        }
    }

    pub(crate) fn side_file(what: impl Into<String>, run_root: impl Into<String>) -> Verdict {
        Verdict::SideFile {
            what: what.into(),
            run_root: run_root.into(),
            of_format: None,
        }
    }

    /// A side file of a run that another format reads: `what` it is, and the root and format of that run.
    pub(crate) fn side_file_of(
        format: &'static str,
        what: impl Into<String>,
        run_root: impl Into<String>,
    ) -> Verdict {
        Verdict::SideFile {
            what: what.into(),
            run_root: run_root.into(),
            of_format: Some(format),
        }
    }

    /// This verdict, or, when it does not read the file and the file is a side file (`what` it is), that side
    /// file of the run rooted at `run_root()`: a file that has a format's marks is read whatever its name.
    pub(crate) fn or_side_file(
        self,
        what: Option<&str>,
        run_root: impl FnOnce() -> String,
    ) -> Verdict {
        match what {
            Some(what) if !self.reads() => Verdict::side_file(what, run_root()),
            _ => self,
        }
    }
}

/// What makes a file a format's: a key of a JSON object, or a quoted text anywhere in its head.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mark {
    /// `"name":`.
    Key(&'static str),
    /// `"text"` among keys and values alike; a trailing `*` leaves the quote open (`results_*`: any text that
    /// starts so).
    Text(&'static str),
}

impl Mark {
    fn found(self, head: &[u8]) -> bool {
        match self {
            Mark::Key(key) => head_has_key(head, key),
            Mark::Text(text) => {
                let quoted = match text.strip_suffix('*') {
                    Some(prefix) => format!("\"{prefix}"),
                    None => format!("\"{text}\""),
                };
                memchr::memmem::find(head, quoted.as_bytes()).is_some()
            }
        }
    }

    fn label(self) -> String {
        match self {
            Mark::Key(name) | Mark::Text(name) => match name.strip_suffix('*') {
                Some(prefix) => format!("`{prefix}…`"),
                None => format!("`{name}`"),
            },
        }
    }
}

/// Marks a file must carry together: every requirement, each met by any one of its marks.
pub(crate) type Signature = &'static [&'static [Mark]];

/// The verdict on the head of a JSON object that is `tool`'s (`a vLLM result`) when it carries every requirement
/// of one of the `signatures`: otherwise declined, with what it has and lacks of the signature it comes nearest to
/// (the first of equals).
pub(crate) fn signature_verdict(head: &[u8], tool: &str, signatures: &[Signature]) -> Verdict {
    let met = |signature: Signature| {
        signature
            .iter()
            .filter(|marks| marks.iter().any(|mark| mark.found(head)))
            .count()
    };
    if signatures
        .iter()
        .any(|signature| met(signature) == signature.len())
    {
        return Verdict::Reads;
    }
    let nearest = signatures
        .iter()
        .copied()
        .enumerate()
        .max_by_key(|(index, signature)| (met(signature), std::cmp::Reverse(*index)))
        .map(|(_, signature)| signature);
    let Some(nearest) = nearest.filter(|signature| met(signature) > 0) else {
        let all: Vec<String> = signatures
            .iter()
            .map(|signature| described(signature))
            .collect();
        return Verdict::declines(
            Nearness::NoMarks,
            format!(
                "a JSON object without the keys of {tool} ({})",
                all.join(", or ")
            ),
        );
    };
    let (has, lacks): (Vec<&[Mark]>, Vec<&[Mark]>) = nearest
        .iter()
        .partition(|marks| marks.iter().any(|mark| mark.found(head)));
    let found: Vec<String> = has
        .iter()
        .flat_map(|marks| marks.iter().filter(|mark| mark.found(head)))
        .map(|mark| mark.label())
        .collect();
    let missing: Vec<String> = lacks.iter().map(|marks| requirement(marks)).collect();
    Verdict::declines(
        Nearness::SomeMarks,
        format!(
            "a JSON object with {} but without {}, which {tool} also has",
            listed(&found),
            listed(&missing)
        ),
    )
}

/// The verdict on a file that is `tool`'s (`a GuideLLM report`) when it is a `.json` file opening an object
/// that carries one of the `signatures`.
pub(crate) fn object_file_verdict(
    path: &str,
    head: &[u8],
    tool: &str,
    signatures: &[Signature],
) -> Verdict {
    if !crate::storage::file_name(path).ends_with(".json") {
        Verdict::declines(
            Nearness::OtherKind,
            format!("a file that is not .json, which {tool} is"),
        )
    } else if !json::starts_with_object(head) {
        Verdict::declines(
            Nearness::OtherKind,
            format!("a file that does not open a JSON object, which {tool} is"),
        )
    } else {
        signature_verdict(head, tool, signatures)
    }
}

/// Whether a file's extension is one of the structured kinds other readers take (JSON, JSON Lines, CSV,
/// Parquet), which a text log is not.
pub(crate) fn is_structured(path: &str) -> bool {
    crate::storage::file_name(path)
        .rsplit_once('.')
        .is_some_and(|(_, extension)| {
            matches!(
                extension.to_ascii_lowercase().as_str(),
                "json" | "jsonl" | "csv" | "parquet"
            )
        })
}

/// A signature in words: `` `model_id` and `num_prompts` ``.
fn described(signature: Signature) -> String {
    listed(
        &signature
            .iter()
            .map(|marks| requirement(marks))
            .collect::<Vec<_>>(),
    )
}

/// One requirement in words: its mark, or `one of` its marks.
fn requirement(marks: &[Mark]) -> String {
    match marks {
        [mark] => mark.label(),
        _ => format!(
            "one of {}",
            marks
                .iter()
                .map(|mark| mark.label())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `a`, `a and b`, `a, b and c`.
pub(crate) fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What the verdicts of the formats a file was offered to come to when none reads it: the runs it would be a side
/// file of, and why it is not read (the side file's own account when a format knows it, else the reason of the
/// nearest format, the first of equals).
pub(crate) fn unread(verdicts: &[(&'static str, Verdict)]) -> Unread {
    let side_of: Vec<(&'static str, String)> = verdicts
        .iter()
        .filter_map(|(format, verdict)| match verdict {
            Verdict::SideFile {
                run_root,
                of_format,
                ..
            } => Some((of_format.unwrap_or(*format), run_root.clone())),
            _ => None,
        })
        .collect();
    let side = verdicts.iter().find_map(|(format, verdict)| match verdict {
        Verdict::SideFile {
            what,
            run_root,
            of_format,
        } => Some((of_format.as_ref().unwrap_or(format), what, run_root)),
        _ => None,
    });
    let why = match (side, nearest(verdicts)) {
        (Some((format, what, run_root)), _) => format!(
            "it is {what}, but no {format} run was found at {}",
            shown_root(run_root)
        ),
        (None, Some((format, reason))) => {
            format!("no reader recognises it; the nearest, {format}, finds {reason}")
        }
        (None, None) => "no reader recognises it".to_string(),
    };
    let resembles_a_result = side.is_none()
        && verdicts.iter().any(|(_, verdict)| {
            matches!(
                verdict,
                Verdict::Declines {
                    nearness: Nearness::SomeMarks,
                    ..
                }
            )
        });
    Unread {
        side_of,
        reason: why,
        problem: None,
        resembles_a_result,
    }
}

/// The declining format whose reason is shown: the one the file came nearest to, the first of equals.
fn nearest<'a>(verdicts: &'a [(&'static str, Verdict)]) -> Option<(&'static str, &'a str)> {
    verdicts
        .iter()
        .enumerate()
        .filter_map(|(index, (format, verdict))| match verdict {
            Verdict::Declines { nearness, reason } => Some((index, *nearness, *format, reason)),
            _ => None,
        })
        .max_by_key(|(index, nearness, ..)| (*nearness, std::cmp::Reverse(*index)))
        .map(|(_, _, format, reason)| (format, reason.as_str()))
}

fn shown_root(run_root: &str) -> String {
    if run_root.is_empty() {
        "the data root".to_string()
    } else {
        format!("`{run_root}`")
    }
}

/// What `cellscope index --explain` says of a file no format reads: what it is, each format's verdict (those that
/// find files by name, then those files are offered to), and the nearest of the latter.
pub(crate) fn explain_unread(
    relative: &str,
    by_name: &[(&'static str, Verdict)],
    offered: &[(&'static str, Verdict)],
) -> String {
    use std::fmt::Write as _;
    let side = offered.iter().find_map(|(format, verdict)| match verdict {
        Verdict::SideFile { what, .. } => Some((format, what)),
        _ => None,
    });
    let mut out = match side {
        Some((format, what)) => {
            format!("{relative} is not read: {format} knows it as {what}, not a run of its own\n")
        }
        None => format!("{relative} is not read: no reader recognises it\n"),
    };
    for (format, verdict) in by_name.iter().chain(offered) {
        let _ = match verdict {
            Verdict::Reads => writeln!(out, "  {format:<13} reads it"),
            Verdict::SideFile { what, run_root, .. } => writeln!(
                out,
                "  {format:<13} knows it as {what}, a side file of the run at {}",
                shown_root(run_root)
            ),
            Verdict::Declines { nearness, reason } => {
                writeln!(
                    out,
                    "  {format:<13} declines ({}): {reason}",
                    nearness.words()
                )
            }
        };
    }
    if let (None, Some((format, _))) = (side, nearest(offered)) {
        let _ = writeln!(out, "  nearest: {format}");
    }
    out
}

/// What the verdicts of every format a file was offered to come to when none reads it, with the file's first
/// bytes: [`unread`], named a result that cannot be read when it is one (empty, UTF-16, a cut Parquet file).
pub(crate) fn unread_file(path: &str, head: &[u8], verdicts: &[(&'static str, Verdict)]) -> Unread {
    let mut unread = unread(verdicts);
    if let Some((kind, reason)) = result_problem(path, head) {
        unread.problem = Some(kind);
        unread.reason = reason.to_string();
    }
    unread
}

/// A file discovery offered that cannot be read at all (`error`), so no format could look at it.
pub(crate) fn unreadable(error: &std::io::Error) -> Unread {
    Unread {
        side_of: Vec::new(),
        reason: format!("the file cannot be read ({error}), so no reader could look at it"),
        problem: Some(if crate::storage::not_a_file(error) {
            "not_a_file"
        } else {
            "unreadable_file"
        }),
        resembles_a_result: false,
    }
}

/// Why a file no reader took is a result that cannot be read rather than an unknown file: its warning kind and
/// reason. A format may claim such a file by its name and report it itself, which is why this comes last.
fn result_problem(path: &str, head: &[u8]) -> Option<(&'static str, &'static str)> {
    let is_parquet = crate::storage::file_name(path)
        .to_ascii_lowercase()
        .ends_with(".parquet");
    if is_result_name(path) && head.iter().all(u8::is_ascii_whitespace) {
        Some((
            "empty_file",
            "the file is empty (a result cut before its first byte, or never written): there is nothing to read",
        ))
    } else if is_result_name(path)
        && (head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]))
    {
        Some((
            "utf16_file",
            "the file is UTF-16 text (as a Windows shell's `>` writes it); results are read as UTF-8: convert it \
             (`iconv -f UTF-16 -t UTF-8`) to index it",
        ))
    } else if is_parquet && head.starts_with(b"PAR1") {
        Some((
            "corrupt_file",
            "the file starts as Parquet but its footer (the schema and where the data lies) cannot be read: it \
             was cut short or damaged, and nothing of it is indexed",
        ))
    } else {
        None
    }
}

/// Whether a file's name is one results are written under (`.json`, `.jsonl`, `.csv`, `.yaml`, `.txt`, `.log`).
fn is_result_name(path: &str) -> bool {
    let name = crate::storage::file_name(path).to_ascii_lowercase();
    [".json", ".jsonl", ".csv", ".yaml", ".yml", ".txt", ".log"]
        .iter()
        .any(|extension| name.ends_with(extension))
}

#[cfg(test)]
mod tests {
    use super::*;

    const VLLM: &[Signature] = &[
        &[&[Mark::Key("model_id")], &[Mark::Key("num_prompts")]],
        &[&[Mark::Key("run_number")], &[Mark::Key("error_type")]],
    ];

    #[test]
    fn a_signature_is_met_by_every_requirement_of_one_alternative() {
        assert!(signature_verdict(br#"{"model_id": 1, "num_prompts": 2}"#, "x", VLLM).reads());
        assert!(signature_verdict(br#"{"error_type": 1, "run_number": 2}"#, "x", VLLM).reads());
        // A key is followed by a colon: the same word as a value is not the key.
        assert!(!signature_verdict(br#"{"model_id": "num_prompts"}"#, "x", VLLM).reads());
    }

    #[test]
    fn a_declined_object_says_what_it_lacks_of_the_nearest_signature() {
        assert_eq!(
            signature_verdict(br#"{"tool": "mine"}"#, "a vLLM result", VLLM),
            Verdict::declines(
                Nearness::NoMarks,
                "a JSON object without the keys of a vLLM result (`model_id` and `num_prompts`, or \
                 `run_number` and `error_type`)"
            )
        );
        assert_eq!(
            signature_verdict(br#"{"error_type": "x"}"#, "a vLLM result", VLLM),
            Verdict::declines(
                Nearness::SomeMarks,
                "a JSON object with `error_type` but without `run_number`, which a vLLM result also has"
            )
        );
        let any_of: &[Signature] = &[&[
            &[Mark::Key("benchmarks")],
            &[
                Mark::Text("generative_benchmark"),
                Mark::Key("guidellm_version"),
            ],
        ]];
        assert_eq!(
            signature_verdict(br#"{"benchmarks": []}"#, "a GuideLLM report", any_of),
            Verdict::declines(
                Nearness::SomeMarks,
                "a JSON object with `benchmarks` but without one of `generative_benchmark`, \
                 `guidellm_version`, which a GuideLLM report also has"
            )
        );
    }

    #[test]
    fn texts_match_keys_and_values_and_an_open_quote_matches_a_prefix() {
        let head = br#"{"results_ttft_s_mean": 1, "type_": "generative_benchmark"}"#;
        assert!(Mark::Text("results_*").found(head));
        assert!(Mark::Text("generative_benchmark").found(head));
        assert!(!Mark::Text("generative").found(head));
        assert_eq!(Mark::Text("results_*").label(), "`results_…`");
    }

    #[test]
    fn the_nearest_decline_is_shown_and_a_known_side_file_speaks_for_itself() {
        let verdicts = [
            ("a", Verdict::declines(Nearness::OtherKind, "not JSON")),
            ("b", Verdict::declines(Nearness::SomeMarks, "half of b")),
            ("c", Verdict::declines(Nearness::SomeMarks, "half of c")),
            ("d", Verdict::declines(Nearness::NoMarks, "nothing of d")),
        ];
        let unread = unread(&verdicts);
        assert!(unread.side_of.is_empty());
        assert_eq!(
            unread.reason,
            "no reader recognises it; the nearest, b, finds half of b"
        );
        let by_name = [("n", Verdict::declines(Nearness::SomeMarks, "named not so"))];
        let explained = explain_unread("x.json", &by_name, &verdicts);
        assert!(explained.starts_with("x.json is not read: no reader recognises it\n  n  "));
        assert!(explained.contains("  c             declines (some of its marks): half of c\n"));
        assert!(explained.ends_with("  nearest: b\n"), "{explained}");

        let with_side = [
            ("a", Verdict::declines(Nearness::SomeMarks, "half of a")),
            ("b", Verdict::side_file("a sweep's summary", "runs/sweep")),
        ];
        let unread = super::unread(&with_side);
        assert_eq!(unread.side_of, vec![("b", "runs/sweep".to_string())]);
        assert_eq!(
            unread.reason,
            "it is a sweep's summary, but no b run was found at `runs/sweep`"
        );
        let explained = explain_unread("s.json", &[], &with_side);
        assert!(
            explained.starts_with(
                "s.json is not read: b knows it as a sweep's summary, not a run of its own\n"
            ),
            "{explained}"
        );
        assert!(!explained.contains("nearest"), "{explained}");
    }
}
