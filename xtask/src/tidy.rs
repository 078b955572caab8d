//! `cargo xtask ci`'s tidy step: the project cites only its own files, and every relative Markdown link resolves.
//!
//! Two checks over the files git knows (tracked, or new and not ignored):
//! - no file of code or documentation cites a document outside the repository, a numbered issue, or a place in the
//!   source reports the demo data imitates (a report line, a contradiction code, a section sign), and the
//!   user-facing Markdown (README.md, ARCHITECTURE.md, CONTRIBUTING.md, docs/) does not speak of work sessions;
//! - every relative link of those Markdown files and of every README.md points at a file that exists, and an
//!   `#anchor` into a Markdown file names one of its headings.
//!
//! And four over the code's structure: every Rust file opens with a `//!` line, no import cycle between the modules
//! of a crate ([`modules`]), every fixture directory described in its README.md ([`fixtures`]), and the app decoding
//! only the model's wire types ([`wire`]).
//! `cargo test -p xtask` runs them all on the workspace too.
//!
//! Every problem is reported as `file:line: …`, all of them at once.

mod fixtures;
mod modules;
mod wire;

use anyhow::Context;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Citations of documents a reader of the repository does not have. Written in pieces so that this file does not
/// match its own check.
const OUTSIDE_REFERENCES: [&str; 5] = [
    concat!("product", ".md"),
    concat!("data-model", ".md"),
    concat!("formats", ".md §"),
    concat!("../", "shared"),
    concat!("build", " notes"),
];

/// The pieces of the report-citation forms, written apart so that this file does not match its own check: a report
/// line is three digits, this, and a digit (`000` `:L` `164`); a contradiction code is this and two digits as a
/// word (`C-` `06`); a section sign is this and a digit (`§` `5.5`).
const REPORT_LINE: &str = concat!(":", "L");
const CONTRADICTION_CODE: &str = concat!("C", "-");
const SECTION_SIGN: char = '\u{a7}';

/// Marks a line whose citation is text the demo generator writes byte for byte into its data, and the line after
/// it; the data would change if the citation did.
const KEPT_CITATION: &str = "tidy: generated text";

/// Words of a development diary that the user-facing Markdown must not contain.
const DIARY_WORDS: [&str; 1] = [concat!("sess", "ion")];

/// Extensions of the files whose text is code or documentation.
const TEXT_EXTENSIONS: [&str; 9] = ["rs", "md", "toml", "py", "js", "css", "html", "sh", "yml"];

/// One problem, at a line of a file (1-based).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Problem {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Runs every check on the workspace and fails listing every problem.
pub(crate) fn run() -> anyhow::Result<()> {
    let root = crate::workspace_root();
    let (files, problems) = workspace_problems(&root)?;
    if problems.is_empty() {
        eprintln!("tidy: {} files checked, no problem", files.len());
        return Ok(());
    }
    for problem in &problems {
        eprintln!("{problem}");
    }
    anyhow::bail!(
        "tidy: {} problem(s): cite docs/ instead of documents outside the repository, state the fact a report \
         citation points at, fix the links, break the import cycles, describe the fixtures and decode the \
         model's types",
        problems.len()
    )
}

/// Every check over the files git knows under `root`: those files and the problems found in them.
fn workspace_problems(root: &Path) -> anyhow::Result<(Vec<String>, Vec<Problem>)> {
    let files = known_files(root)?;
    let mut problems = check(root, &files)?;
    problems.extend(first_lines(root, &files));
    problems.extend(modules::check(root)?);
    problems.extend(fixtures::check(root)?);
    problems.extend(wire::check(root, &files)?);
    Ok((files, problems))
}

/// Every Rust file of `files` whose first line is not a `//!` line saying what the file is for.
fn first_lines(root: &Path, files: &[String]) -> Vec<Problem> {
    files
        .iter()
        .filter(|file| file.ends_with(".rs"))
        .filter(|file| {
            std::fs::read_to_string(root.join(file))
                .is_ok_and(|text| !text.lines().next().unwrap_or("").starts_with("//!"))
        })
        .map(|file| Problem {
            file: file.clone(),
            line: 1,
            message: "the first line is not a `//!` line saying what the file is for".to_string(),
        })
        .collect()
}

/// The files git knows under `root`, relative to it: tracked, or new and not ignored.
fn known_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let output = std::process::Command::new("git")
        .args([
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "-z",
        ])
        .current_dir(root)
        .output()
        .context("running `git ls-files`")?;
    anyhow::ensure!(
        output.status.success(),
        "`git ls-files` failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut files: Vec<String> = output
        .stdout
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .filter(|name| root.join(name).is_file())
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}

/// Both checks over `files` (relative to `root`).
pub(crate) fn check(root: &Path, files: &[String]) -> anyhow::Result<Vec<Problem>> {
    let mut problems = Vec::new();
    for file in files {
        let scanned = scanned_for_references(file);
        let linked = checked_for_links(file);
        if !scanned && !linked {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        if scanned {
            problems.extend(references(file, &text));
        }
        if linked {
            problems.extend(broken_links(root, file, &text)?);
        }
    }
    problems.sort();
    Ok(problems)
}

/// Code and documentation; not the data files of fixtures and fuzz corpora, which hold other programs' text.
fn scanned_for_references(file: &str) -> bool {
    let extension = Path::new(file)
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or("");
    let data = file.starts_with("data/fixtures/")
        || file.starts_with("fuzz/corpus/")
        || file.starts_with("data/demo/")
        || file.starts_with("data/demo-mixed/")
        || file.starts_with("data/demo-nightly/");
    let documentation_or_tool = matches!(extension, "md" | "py");
    (TEXT_EXTENSIONS.contains(&extension) || file == ".ci/run")
        && (!data || documentation_or_tool)
        && !is_fixture_document(file)
}

/// Markdown files inside fixtures that are data (refill notes), not documentation.
fn is_fixture_document(file: &str) -> bool {
    file.starts_with("data/fixtures/") && file.ends_with(".md") && !file.ends_with("README.md")
}

/// The user-facing Markdown, held to the diary words as well.
fn is_user_facing(file: &str) -> bool {
    matches!(file, "README.md" | "ARCHITECTURE.md" | "CONTRIBUTING.md")
        || (file.starts_with("docs/") && file.ends_with(".md"))
}

/// The Markdown whose relative links must resolve.
fn checked_for_links(file: &str) -> bool {
    is_user_facing(file)
        || ((file == "README.md" || file.ends_with("/README.md"))
            && !file.starts_with("fuzz/corpus/"))
}

/// The citations of outside documents, numbered issues and places in the source reports in `text`, and the diary
/// words in user-facing Markdown.
pub(crate) fn references(file: &str, text: &str) -> Vec<Problem> {
    let user_facing = is_user_facing(file);
    let mut problems = Vec::new();
    let mut previous = "";
    for (index, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        let mut found: Vec<String> = OUTSIDE_REFERENCES
            .iter()
            .filter(|reference| lower.contains(*reference))
            .map(|reference| format!("cites `{reference}`, a document outside the repository"))
            .collect();
        if cites_an_issue(&lower) {
            found.push("cites a numbered issue".to_string());
        }
        if !previous.contains(KEPT_CITATION)
            && !line.contains(KEPT_CITATION)
            && !is_ledger_source(line)
        {
            found.extend(
                report_citations(line)
                    .into_iter()
                    .map(|form| format!("cites {form} of a source report; state the fact instead")),
            );
        }
        previous = line;
        if user_facing {
            found.extend(
                DIARY_WORDS
                    .iter()
                    .filter(|word| lower.contains(*word))
                    .map(|word| format!("speaks of a `{word}` of work")),
            );
        }
        problems.extend(found.into_iter().map(|message| Problem {
            file: file.to_string(),
            line: index + 1,
            message,
        }));
    }
    problems
}

/// The forms of report citation in `line`, named once each: a report line, a contradiction code, a section sign
/// before a number (the forms of [`REPORT_LINE`], [`CONTRADICTION_CODE`] and [`SECTION_SIGN`]).
fn report_citations(line: &str) -> Vec<&'static str> {
    let bytes = line.as_bytes();
    let mut forms = Vec::new();
    let report_line = line.match_indices(REPORT_LINE).any(|(start, _)| {
        start >= 3
            && bytes[start - 3..start].iter().all(u8::is_ascii_digit)
            && bytes
                .get(start + REPORT_LINE.len())
                .is_some_and(u8::is_ascii_digit)
    });
    if report_line {
        forms.push("a line");
    }
    let is_word =
        |byte: Option<&u8>| byte.is_some_and(|byte| byte.is_ascii_alphanumeric() || *byte == b'_');
    let contradiction = line.match_indices(CONTRADICTION_CODE).any(|(start, _)| {
        let digits = start + CONTRADICTION_CODE.len();
        !is_word(start.checked_sub(1).and_then(|before| bytes.get(before)))
            && bytes
                .get(digits..digits + 2)
                .is_some_and(|pair| pair.iter().all(u8::is_ascii_digit))
            && !is_word(bytes.get(digits + 2))
    });
    if contradiction {
        forms.push("a contradiction code");
    }
    let section = line.match_indices(SECTION_SIGN).any(|(start, sign)| {
        line[start + sign.len()..]
            .trim_start()
            .starts_with(|character: char| character.is_ascii_digit())
    });
    if section {
        forms.push("a section");
    }
    forms
}

/// The `source` key of an exclusion-ledger entry: its value names where the decision was taken, and is data of the
/// ledger format (docs/run-format.md), not a citation by the repository.
fn is_ledger_source(line: &str) -> bool {
    let line = line.trim_start();
    line.strip_prefix("source")
        .map(str::trim_start)
        .and_then(|rest| rest.strip_prefix('='))
        .is_some_and(|rest| rest.trim_start().starts_with('"'))
}

/// The word, or its plural, followed by a number (with or without `#`).
fn cites_an_issue(lower: &str) -> bool {
    lower.match_indices("issue").any(|(start, word)| {
        let whole_word = !lower[..start].ends_with(|character: char| character.is_alphanumeric());
        let rest = &lower[start + word.len()..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        let rest = rest.strip_prefix('#').unwrap_or(rest);
        whole_word && rest.starts_with(|character: char| character.is_ascii_digit())
    })
}

/// The relative links of the Markdown `text` of `file` that do not resolve.
pub(crate) fn broken_links(root: &Path, file: &str, text: &str) -> anyhow::Result<Vec<Problem>> {
    let directory = Path::new(file).parent().unwrap_or(Path::new(""));
    let mut problems = Vec::new();
    for (line, target) in links(text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (target.as_str(), None),
        };
        let resolved: PathBuf = if path.is_empty() {
            PathBuf::from(file)
        } else {
            normalise(&directory.join(path))
        };
        let problem = |message: String| Problem {
            file: file.to_string(),
            line,
            message,
        };
        if resolved.starts_with("..") || !root.join(&resolved).exists() {
            problems.push(problem(format!(
                "link `{target}`: {} does not exist",
                resolved.display()
            )));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if resolved
            .extension()
            .and_then(|extension| extension.to_str())
            != Some("md")
        {
            continue;
        }
        let linked = std::fs::read_to_string(root.join(&resolved))
            .with_context(|| format!("reading {}", resolved.display()))?;
        if !anchors(&linked).contains(anchor) {
            problems.push(problem(format!(
                "link `{target}`: {} has no heading with the anchor `#{anchor}`",
                resolved.display()
            )));
        }
    }
    Ok(problems)
}

/// `a/b/../c` → `a/c`, without touching the file system; a path leaving its root keeps its leading `..`.
fn normalise(path: &Path) -> PathBuf {
    let mut parts: Vec<std::path::Component> = Vec::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir
                if matches!(parts.last(), Some(std::path::Component::Normal(_))) =>
            {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.iter().collect()
}

/// The targets of the inline links and images of Markdown `text`, with their lines; code is not read.
pub(crate) fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (index, line) in prose_lines(text) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            let target = target.trim_start_matches('<').trim_end_matches('>');
            if !target.is_empty() {
                found.push((index + 1, target.to_string()));
            }
            rest = &after[end..];
        }
    }
    found
}

/// The lines of Markdown `text` outside fenced code blocks, with their 0-based index.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut in_fence = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            lines.push((index, line));
        }
    }
    lines
}

/// `line` with its inline code spans removed.
fn without_code_spans(line: &str) -> String {
    line.split('`')
        .enumerate()
        .filter(|(index, _)| index % 2 == 0)
        .map(|(_, part)| part)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The anchors the headings of Markdown `text` get, as GitHub makes them: lower case, punctuation dropped, spaces
/// as hyphens, a repeated anchor numbered `-1`, `-2`, ….
pub(crate) fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(heading.trim());
        let mut anchor = base.clone();
        let mut count = 0;
        while seen.contains(&anchor) {
            count += 1;
            anchor = format!("{base}-{count}");
        }
        seen.insert(anchor);
    }
    seen
}

/// GitHub's anchor of one heading's text.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|character| character.is_alphanumeric() || matches!(character, ' ' | '-' | '_'))
        .map(|character| if character == ' ' { '-' } else { character })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_passes_every_tidy_check() {
        let (files, problems) = workspace_problems(&crate::workspace_root()).unwrap();
        assert!(files.iter().any(|file| file == "xtask/src/tidy.rs"));
        assert_eq!(messages(&problems), Vec::<String>::new());
    }

    #[test]
    fn a_rust_file_without_a_leading_doc_line_is_reported() {
        let root =
            std::env::temp_dir().join(format!("cellscope-tidy-first-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("good.rs"), "//! What it is for.\nfn f() {}\n").unwrap();
        std::fs::write(root.join("bad.rs"), "// a plain comment\n//! too late\n").unwrap();
        std::fs::write(root.join("empty.rs"), "").unwrap();
        std::fs::write(root.join("notes.md"), "no doc line needed\n").unwrap();
        let files = ["bad.rs", "empty.rs", "good.rs", "notes.md"].map(String::from);
        let problems = first_lines(&root, &files);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            problems
                .iter()
                .map(|problem| (problem.file.as_str(), problem.line))
                .collect::<Vec<_>>(),
            [("bad.rs", 1), ("empty.rs", 1)]
        );
    }

    fn messages(problems: &[Problem]) -> Vec<String> {
        problems.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_citation_of_an_outside_document_or_an_issue_is_reported_at_its_line() {
        let text = format!(
            "//! fine\n// see {}\n// ({}) and {}\n// {} layers thick is fine\n",
            OUTSIDE_REFERENCES[1],
            concat!("Iss", "ue 10"),
            concat!("iss", "ue #12"),
            concat!("a tiss", "ue 3"),
        );
        let problems = references("model/src/x.rs", &text);
        assert_eq!(
            messages(&problems),
            [
                format!(
                    "model/src/x.rs:2: cites `{}`, a document outside the repository",
                    OUTSIDE_REFERENCES[1]
                ),
                "model/src/x.rs:3: cites a numbered issue".to_string(),
            ]
        );
        assert!(!cites_an_issue(concat!("a tiss", "ue 3")));
        assert!(!cites_an_issue("an issue of the data"));
        assert!(cites_an_issue(concat!("two iss", "ues 3 and 4")));
    }

    #[test]
    fn every_outside_reference_is_caught_in_any_case() {
        for reference in OUTSIDE_REFERENCES {
            let line = format!("see {}", reference.to_uppercase());
            assert_eq!(references("a.rs", &line).len(), 1, "{reference}");
        }
    }

    #[test]
    fn each_form_of_report_citation_is_reported() {
        let cases = [
            (
                format!("// the published table (001{REPORT_LINE}99-105)"),
                "a line",
            ),
            (
                format!("// rows keep the refill run id [{CONTRADICTION_CODE}06]"),
                "a contradiction code",
            ),
            (
                format!("// as TR164 V3 {SECTION_SIGN}13 and {SECTION_SIGN} 5.5 say"),
                "a section",
            ),
        ];
        for (text, form) in cases {
            assert_eq!(
                messages(&references("demo/src/v1.rs", &text)),
                [format!(
                    "demo/src/v1.rs:1: cites {form} of a source report; state the fact instead"
                )],
                "{text}"
            );
        }
        let all = format!("(000{REPORT_LINE}1083, {CONTRADICTION_CODE}01, {SECTION_SIGN}7.2)");
        assert_eq!(
            report_citations(&all),
            ["a line", "a contradiction code", "a section"]
        );
    }

    #[test]
    fn lookalikes_of_report_citations_pass() {
        for text in [
            format!("at 10{REPORT_LINE}5, 1234{REPORT_LINE}x, 12:30 L4"),
            format!(
                "AB{CONTRADICTION_CODE}12, {CONTRADICTION_CODE}1, {CONTRADICTION_CODE}123, \
                 {CONTRADICTION_CODE}12a, c-12"
            ),
            format!("a {SECTION_SIGN} sign alone, {SECTION_SIGN}a"),
        ] {
            assert!(report_citations(&text).is_empty(), "{text}");
        }
    }

    #[test]
    fn generated_text_and_ledger_sources_keep_their_citations() {
        let code = format!("{CONTRADICTION_CODE}19");
        let text = format!(
            "// {KEPT_CITATION}\nnote: \"({code})\",\nnote: \"({code})\", // {KEPT_CITATION}\n\
             source = \"TR164 V3 {SECTION_SIGN}15\"\nnote: \"({code})\",\n"
        );
        assert_eq!(
            messages(&references("demo/src/v1/traces.rs", &text)),
            [
                "demo/src/v1/traces.rs:5: cites a contradiction code of a source report; state the fact instead"
            ]
        );
        assert!(is_ledger_source("  source=\"x\""));
        assert!(!is_ledger_source("let source = x;"));
        assert!(!is_ledger_source("sources = \"x\""));
    }

    #[test]
    fn diary_words_count_only_in_user_facing_markdown() {
        let text = format!("the third {} measured it\n", DIARY_WORDS[0]);
        assert_eq!(references("docs/performance.md", &text).len(), 1);
        assert_eq!(references("README.md", &text).len(), 1);
        assert!(references("tests/src/browser.rs", &text).is_empty());
    }

    #[test]
    fn links_are_read_outside_code_only() {
        let text = "A [link](docs/a.md#x) and ![img](pic.png \"title\").\n\
                    `[not](a-link.md)` here\n\
                    ```\n[inside](fence.md)\n```\n\
                    [web](https://example.org) [<angled>](b.md)\n";
        assert_eq!(
            links(text),
            [
                (1, "docs/a.md#x".to_string()),
                (1, "pic.png".to_string()),
                (6, "https://example.org".to_string()),
                (6, "b.md".to_string()),
            ]
        );
    }

    #[test]
    fn anchors_follow_github_and_skip_code_blocks() {
        let text = "# Title\n## `cellscope.toml`\n## P95 multiplier\n## Refill lineage\n## Title\n\
                    ```sh\n# not a heading\n```\n#nospace\n";
        let anchors = anchors(text);
        let expected: BTreeSet<String> = [
            "title",
            "cellscopetoml",
            "p95-multiplier",
            "refill-lineage",
            "title-1",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        assert_eq!(anchors, expected);
    }

    #[test]
    fn a_missing_file_or_anchor_fails_and_a_good_link_passes() -> anyhow::Result<()> {
        let root = std::env::temp_dir().join(format!("xtask-tidy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("docs"))?;
        std::fs::write(root.join("docs/defs.md"), "# Defs\n## Efficiency\n")?;
        std::fs::write(
            root.join("README.md"),
            "[ok](docs/defs.md#efficiency) [ok too](docs/defs.md) [self](#top)\n\
             [gone](docs/gone.md)\n[no anchor](docs/defs.md#speed)\n[out](../elsewhere.md)\n# Top\n",
        )?;
        let files = vec!["README.md".to_string(), "docs/defs.md".to_string()];
        let problems = check(&root, &files)?;
        std::fs::remove_dir_all(&root)?;
        assert_eq!(
            messages(&problems),
            [
                "README.md:2: link `docs/gone.md`: docs/gone.md does not exist",
                "README.md:3: link `docs/defs.md#speed`: docs/defs.md has no heading with the anchor `#speed`",
                "README.md:4: link `../elsewhere.md`: ../elsewhere.md does not exist",
            ]
        );
        Ok(())
    }

    #[test]
    fn fixture_data_is_not_scanned_but_fixture_readmes_and_tools_are() {
        assert!(!scanned_for_references(
            "data/fixtures/formats/aiperf-bad/x/profile_export.jsonl"
        ));
        assert!(!scanned_for_references(
            "data/fixtures/good/run/REFILL_NOTE.md"
        ));
        assert!(scanned_for_references("data/fixtures/README.md"));
        assert!(scanned_for_references("data/fixtures/formats/oracle.py"));
        assert!(scanned_for_references("model/src/curve.rs"));
        assert!(!scanned_for_references("fuzz/corpus/exclusions/demo.toml"));
        assert!(!scanned_for_references("data/demo/exclusions.toml"));
        assert!(scanned_for_references("data/demo-recipe.toml"));
    }
}
