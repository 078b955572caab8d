//! Console logs of serving benchmarks committed instead of their JSON results, aggregates only: vLLM's and
//! SGLang's `Serving Benchmark Result` blocks (each taking the argparse `Namespace(...)` dump printed before it)
//! and trtllm-bench's report (`= PERFORMANCE OVERVIEW`). Recognised by content, whatever the file's extension;
//! ANSI colours, `\r` progress bars and log prefixes are read through. Several blocks in one log (a sweep run in a
//! shell loop) are several cells; a run that ends before its block (a dead run) or a block cut short is a warning,
//! never a cell.

use super::RunFormat;
use crate::parse::model_name;
use crate::records::verdict::{self, Nearness, Verdict};
use crate::run::record::Setting;
use crate::run::record::{FileAt, How, KeyParts, Part, RunRecord};
use cellscope_model::api::Warning;
use cellscope_model::stat::Stat;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

pub(super) struct ConsoleLog;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &ConsoleLog;

/// The banner vLLM and SGLang print over their result block.
const BANNER: &str = "Serving Benchmark Result";

/// How much of a log detection reads when its first bytes do not decide (server start-up output can be long).
const SCAN_BYTES: u64 = 16 * 1024 * 1024;

/// Texts that make a file a console log with results.
const RESULT_MARKS: [&[u8]; 3] = [
    BANNER.as_bytes(),
    b"= PERFORMANCE OVERVIEW",
    b"Request Throughput (req/sec):",
];

/// Texts of a bench run that may have died before printing results: the argument dump and vLLM's progress lines.
const RUN_MARKS: [&[u8]; 3] = [
    b"Starting initial single prompt test run",
    b"Traffic request rate:",
    b"Maximum request concurrency:",
];

/// Whether a file opens a JSON object or an array of objects or strings (a log line may open with `[`).
fn is_json(head: &[u8]) -> bool {
    let start = head.trim_ascii_start();
    start.starts_with(b"{")
        || start.strip_prefix(b"[").is_some_and(|rest| {
            matches!(
                rest.trim_ascii_start().first(),
                Some(b'{' | b'"' | b']') | None
            )
        })
}

/// Whether `bytes` hold a result block or a bench run's marks.
fn has_marks(bytes: &[u8]) -> bool {
    let find = |mark: &[u8]| memchr::memmem::find(bytes, mark).is_some();
    RESULT_MARKS.iter().any(|mark| find(mark))
        || RUN_MARKS.iter().any(|mark| find(mark))
        || (find(b"Namespace(") && (find(b"request_rate=") || find(b"max_concurrency=")))
}

/// Other benchmark output a text may hold, which no reader reads, as (text that marks it, what it is): named in
/// a `not_recognised` finding so that a saved run is never passed over in silence.
const RESEMBLES: [(&str, &str); 9] = [
    (
        "| model ",
        "the output of llama.cpp's `llama-bench` (its `| model | size | params | backend | ngl | test | t/s |` table)",
    ),
    (
        "Benchmarks Stats",
        "GuideLLM's console summary (`Benchmarks Stats`)",
    ),
    (
        "Benchmarks Metadata",
        "GuideLLM's console summary (`Benchmarks Metadata`)",
    ),
    ("guidellm benchmark", "a GuideLLM run's console output"),
    (
        "[TensorRT-LLM]",
        "TensorRT-LLM's console output (`[TensorRT-LLM]` lines)",
    ),
    (
        "sglang.bench_serving",
        "an SGLang `bench_serving` run's console output",
    ),
    (
        "vllm bench serve",
        "a `vllm bench serve` run's console output",
    ),
    (
        "benchmark_serving.py",
        "a vLLM `benchmark_serving.py` run's console output",
    ),
    (
        "Automatically detected platform",
        "vLLM's console output (its logger lines)",
    ),
];

/// What other benchmark output the text resembles ([`RESEMBLES`]), if any.
fn resembles(head: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(head);
    RESEMBLES
        .iter()
        .find(|(mark, _)| {
            if mark.starts_with('|') {
                text.lines().any(|line| {
                    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                    ["model", "test", "t/s"]
                        .iter()
                        .all(|column| cells.contains(column))
                })
            } else {
                text.contains(mark)
            }
        })
        .map(|(_, what)| *what)
}

impl RunFormat for ConsoleLog {
    fn name(&self) -> &'static str {
        "console-log"
    }

    /// [`RunFormat::examine`] over the whole log (up to 16 MiB) when its first bytes do not decide.
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        let (storage, path, head) = (file.storage, file.path, file.head);
        let verdict = self.examine_head(path, head);
        let undecided = matches!(
            verdict,
            Verdict::Declines {
                nearness: Nearness::NoMarks,
                ..
            }
        );
        if undecided
            && head.len() as u64 >= crate::parse::HEAD_BYTES
            && storage
                .read_range(path, 0..SCAN_BYTES)
                .is_ok_and(|bytes| has_marks(&bytes))
        {
            return Verdict::Reads;
        }
        verdict
    }

    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        let (storage, path) = (file.storage, file.path);
        let Some(bytes) = crate::parse::read_file(storage, path, warnings) else {
            return Vec::new();
        };
        let lines: Vec<String> = String::from_utf8_lossy(&bytes)
            .split('\n')
            .map(clean)
            .collect();
        Log::read(&lines, path, warnings).records(path, warnings)
    }
}

impl ConsoleLog {
    /// Text (not JSON) with a `Serving Benchmark Result` block, a trtllm-bench report, or a bench run's argument
    /// dump or progress lines (so a run that died before its block is reported).
    pub(super) fn examine_head(&self, path: &str, head: &[u8]) -> Verdict {
        if is_json(head) || verdict::is_structured(path) {
            return Verdict::declines(
                Nearness::OtherKind,
                "a JSON, CSV or Parquet file, where a console log is the text a bench printed",
            );
        }
        if has_marks(head) {
            Verdict::Reads
        } else if let Some(what) = resembles(head) {
            Verdict::declines(
                Nearness::SomeMarks,
                format!(
                    "{what}, which no reader reads: it has no `Serving Benchmark Result` block, trtllm-bench report \
                     or bench run's argument dump"
                ),
            )
        } else {
            Verdict::declines(
                Nearness::NoMarks,
                "a text without a `Serving Benchmark Result` block, a trtllm-bench report or a bench run's \
                 argument dump",
            )
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Lines

/// A console line as it reads on a terminal: ANSI escape sequences removed, the text after the last carriage
/// return (a progress bar redrawn in place), and a logger's prefix (`INFO 03-01 12:00:00 [serve.py:123] `, a
/// bracketed or ISO timestamp, a `service | ` prefix) left out.
fn clean(raw: &str) -> String {
    let raw = raw.strip_suffix('\r').unwrap_or(raw);
    let last = raw
        .rsplit('\r')
        .find(|segment| !segment.trim().is_empty())
        .unwrap_or("");
    let mut text = String::with_capacity(last.len());
    let mut chars = last.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            text.push(c);
            continue;
        }
        // CSI sequences end at a byte in `@`..`~`; other escapes are one character long.
        if chars.next_if_eq(&'[').is_some() {
            for next in chars.by_ref() {
                if ('@'..='~').contains(&next) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    without_prefix(&text).to_string()
}

/// The text after a logger's prefix.
fn without_prefix(line: &str) -> &str {
    let mut text = line.trim_start();
    // vLLM's logger: `INFO 03-01 12:00:00 [serve.py:123] `.
    for level in ["INFO ", "WARNING ", "DEBUG ", "ERROR "] {
        if let Some(rest) = text.strip_prefix(level)
            && rest.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && let Some(end) = rest.find("] ")
        {
            text = &rest[end + 2..];
            return text;
        }
    }
    // `[2026-03-01 12:00:00] ` or `[12:00:00] `.
    if let Some(rest) = text.strip_prefix('[')
        && rest.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && let Some(end) = rest.find("] ")
        && end < 40
    {
        text = &rest[end + 2..];
    }
    // `2026-03-01 12:00:00,123 - INFO - ` or `2026-03-01T12:00:00Z `.
    let bytes = text.as_bytes();
    if bytes.len() > 19
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes[13] == b':'
    {
        let after = text[19..].trim_start_matches(|c: char| c != ' ' && c != '\t');
        let after = after.trim_start();
        text = after
            .strip_prefix("- ")
            .and_then(|rest| rest.split_once(" - ").map(|(_, message)| message))
            .unwrap_or(after);
    }
    // `bench-1  | ` (docker compose).
    if let Some((service, rest)) = text.split_once(" | ")
        && service.len() < 40
        && !service.contains(':')
    {
        text = rest;
    }
    text
}

/// `label: value` of a line, both trimmed.
fn label_value(line: &str) -> Option<(&str, &str)> {
    let (label, value) = line.split_once(':')?;
    let label = label.trim();
    (!label.is_empty()).then_some((label, value.trim()))
}

/// A number as the benches print it: `1.50`, `inf`, `2.9766E+13`, `inf RPS.` (its first word).
fn number(text: &str) -> Option<f64> {
    let trimmed = text.trim();
    let word = match trimmed.split_once(' ') {
        Some((first, _)) => first.trim_end_matches('.'),
        None => trimmed,
    };
    match word {
        "inf" | "Infinity" => Some(f64::INFINITY),
        other => other.parse::<f64>().ok().filter(|value| value.is_finite()),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The log

/// What a log holds: its argument dumps, its result blocks and reports, and the runs that gave neither.
struct Log<'a> {
    lines: &'a [String],
    /// (line index, the dump's arguments).
    dumps: Vec<(usize, Map<String, Json>)>,
    blocks: Vec<Block>,
    /// Where the blocks cut short open: their runs are reported as cut, not as dead.
    cut: Vec<usize>,
}

/// Which tool printed a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    Vllm,
    Sglang,
    Trtllm,
}

/// One result block: where it opens and closes (line indexes), and its `label: value` lines with their index.
struct Block {
    tool: Tool,
    start: usize,
    end: usize,
    /// (section, label, value, line index).
    entries: Vec<(String, String, String, usize)>,
}

impl<'a> Log<'a> {
    /// Finds the argument dumps and the blocks; a block cut short is reported and left out.
    fn read(lines: &'a [String], path: &str, warnings: &mut Vec<Warning>) -> Log<'a> {
        let mut log = Log {
            lines,
            dumps: Vec::new(),
            blocks: Vec::new(),
            cut: Vec::new(),
        };
        let mut at = 0;
        while at < lines.len() {
            let line = &lines[at];
            if let Some(start) = line.find("Namespace(") {
                let arguments = namespace(&line[start + "Namespace(".len()..]);
                // SGLang prints each run's arguments twice (`benchmark_args=Namespace(...)`, then
                // `Namespace(...)`): a dump repeating the one just before, with no block between, is that run's.
                let repeats = log.dumps.last().is_some_and(|(previous, earlier)| {
                    at - previous <= 10
                        && log
                            .blocks
                            .last()
                            .is_none_or(|block| block.start < *previous)
                        && log.cut.last().is_none_or(|cut| cut < previous)
                        && same_run(earlier, &arguments)
                });
                if repeats {
                    if let Some(last) = log.dumps.last_mut() {
                        last.1 = arguments;
                    }
                } else {
                    log.dumps.push((at, arguments));
                }
            }
            if line.contains(BANNER) {
                at = log.serving_block(at, path, warnings);
                continue;
            }
            if report_heading(line).is_some() {
                at = log.trtllm_report(at, path, warnings);
                continue;
            }
            at += 1;
        }
        log
    }

    /// The vLLM or SGLang block opened at `start`: its lines up to the closing `====` line. Cut short (the log
    /// ends, or another run starts, first), it is reported at the line where it stops. Returns the next line.
    fn serving_block(&mut self, start: usize, path: &str, warnings: &mut Vec<Warning>) -> usize {
        let mut block = Block {
            tool: Tool::Vllm,
            start,
            end: start,
            entries: Vec::new(),
        };
        let mut section = String::new();
        let mut at = start + 1;
        while at < self.lines.len() {
            let line = self.lines[at].trim();
            if line.contains(BANNER) || line.contains("Namespace(") {
                break;
            }
            if line.len() >= 10 && line.bytes().all(|b| b == b'=') {
                block.end = at;
                if block
                    .entries
                    .iter()
                    .any(|(_, label, ..)| label == "Backend")
                {
                    block.tool = Tool::Sglang;
                }
                self.blocks.push(block);
                return at + 1;
            }
            if line.starts_with("---") && line.ends_with('-') {
                section = line.trim_matches('-').trim().to_string();
            } else if let Some((label, value)) = label_value(line) {
                block
                    .entries
                    .push((section.clone(), label.to_string(), value.to_string(), at));
            }
            at += 1;
        }
        let last = self.last_text_line(start, at);
        self.cut.push(start);
        warnings.push(
            Warning::warn(
                "block_cut",
                format!(
                    "the result block opened at line {} stops at line {} without its closing `====` line (the \
                     log was cut or the run killed while printing); it gives no cell",
                    start + 1,
                    last + 1
                ),
            )
            .file(path)
            .line(last as u64 + 1),
        );
        at
    }

    /// The trtllm-bench report whose first heading is at `start`: every line up to the next report, result block,
    /// argument dump or the end. Without its performance section it was cut short and is reported.
    fn trtllm_report(&mut self, start: usize, path: &str, warnings: &mut Vec<Warning>) -> usize {
        let opening = report_heading(&self.lines[start]).unwrap_or_default();
        let mut block = Block {
            tool: Tool::Trtllm,
            start,
            end: start,
            entries: Vec::new(),
        };
        let mut section = opening.clone();
        let mut performance = is_performance(&opening);
        let mut at = start + 1;
        while at < self.lines.len() {
            let line = self.lines[at].trim();
            if line.contains(BANNER) || line.contains("Namespace(") {
                break;
            }
            if let Some(heading) = report_heading(line) {
                if is_report_start(&heading) && performance {
                    break;
                }
                performance |= is_performance(&heading);
                section = heading;
            } else if let Some(title) = line.strip_prefix("-- ") {
                section = title.trim_end_matches(['-', ' ']).to_string();
            } else if let Some((label, value)) = label_value(line) {
                block
                    .entries
                    .push((section.clone(), label.to_string(), value.to_string(), at));
            }
            if !line.is_empty() {
                block.end = at;
            }
            at += 1;
        }
        let has_throughput = block
            .entries
            .iter()
            .any(|(_, label, ..)| label == "Request Throughput (req/sec)");
        if performance && has_throughput {
            self.blocks.push(block);
        } else {
            let last = self.last_text_line(start, at);
            self.cut.push(start);
            warnings.push(
                Warning::warn(
                    "block_cut",
                    format!(
                        "the trtllm-bench report opened at line {} stops at line {} before its performance figures \
                         (the log was cut or the run killed while printing); it gives no cell",
                        start + 1,
                        last + 1
                    ),
                )
                .file(path)
                .line(last as u64 + 1),
            );
        }
        at
    }

    /// The last non-blank line in `start..end`.
    fn last_text_line(&self, start: usize, end: usize) -> usize {
        (start..end.min(self.lines.len()))
            .rev()
            .find(|at| !self.lines[*at].trim().is_empty())
            .unwrap_or(start)
    }

    /// One record per block, and a warning for each run that started (an argument dump, or vLLM's progress lines
    /// in a log without dumps) and printed no block before the next run or the end.
    fn records(&self, path: &str, warnings: &mut Vec<Warning>) -> Vec<RunRecord> {
        self.warn_dead_runs(path, warnings);
        let mut records = Vec::new();
        let mut previous_end = 0;
        for (index, block) in self.blocks.iter().enumerate() {
            let dump = self
                .dumps
                .iter()
                .rev()
                .find(|(at, _)| *at < block.start)
                .map(|(at, arguments)| (*at, arguments));
            records.push(self.record(index as u32, block, dump, previous_end, path, warnings));
            previous_end = block.end + 1;
        }
        records
    }

    fn warn_dead_runs(&self, path: &str, warnings: &mut Vec<Warning>) {
        let mut starts: Vec<usize> = self.dumps.iter().map(|(at, _)| *at).collect();
        if starts.is_empty()
            && self.blocks.is_empty()
            && self.cut.is_empty()
            && let Some(at) = self.lines.iter().position(|line| {
                RUN_MARKS
                    .iter()
                    .any(|mark| line.contains(std::str::from_utf8(mark).unwrap_or_default()))
            })
        {
            starts.push(at);
        }
        for (position, start) in starts.iter().enumerate() {
            let next = starts.get(position + 1).copied().unwrap_or(usize::MAX);
            let answered = self
                .blocks
                .iter()
                .map(|block| block.start)
                .chain(self.cut.iter().copied())
                .any(|opened| opened > *start && opened < next);
            if !answered {
                let last = self.last_text_line(*start, next.min(self.lines.len()));
                warnings.push(
                    Warning::warn(
                        "dead_run",
                        format!(
                            "the run started at line {} ends at line {} without a result block (it died or was \
                             stopped before printing its results); it gives no cell",
                            start + 1,
                            last + 1
                        ),
                    )
                    .file(path)
                    .line(*start as u64 + 1),
                );
            }
        }
    }

    /// The record of one block: its figures, and the key parts the block, the argument dump before it, the
    /// bench's progress lines or an echoed command line state.
    fn record(
        &self,
        index: u32,
        block: &Block,
        dump: Option<(usize, &Map<String, Json>)>,
        previous_end: usize,
        path: &str,
        warnings: &mut Vec<Warning>,
    ) -> RunRecord {
        let figures = Figures::of(block, path, warnings);
        let mut key = KeyParts::default();
        let mut notes = Vec::new();
        let arguments = dump.map(|(_, arguments)| arguments);
        let dump_line = dump.map_or(0, |(at, _)| at + 1);
        let argument = |name: &str| arguments.and_then(|arguments| arguments.get(name));
        let dump_field = |name: &str| format!("`{name}` of the argument dump at line {dump_line}");
        // The load: a concurrency from the block's own lines, the dump, the run's progress lines or an echoed
        // command line, else an offered rate from the same places in that order.
        let lines_before = previous_end.max(dump.map_or(0, |(at, _)| at))..block.start;
        let (progress_n, progress_rate) = self.progress_load(lines_before.clone());
        let (command_n, command_rate) = self.command_load(lines_before);
        key.n = figures
            .concurrency
            .clone()
            .or_else(|| {
                argument("max_concurrency")
                    .and_then(Json::as_u64)
                    .filter(|n| *n >= 1)
                    .and_then(|n| Part::read(n.to_string(), dump_field("max_concurrency")))
            })
            .or(progress_n)
            .or(command_n);
        if key.n.is_none() {
            key.rate = figures
                .rate
                .clone()
                .or_else(|| {
                    argument("request_rate")
                        .and_then(crate::parse::json::number)
                        .and_then(cellscope_model::RateRps::new)
                        .and_then(|rate| Part::read(rate.to_string(), dump_field("request_rate")))
                })
                .or(progress_rate)
                .or(command_rate);
        }
        if let Some(model) = figures.model.as_deref().or_else(|| {
            ["model", "served_model_name", "model_path"]
                .iter()
                .find_map(|name| argument(name).and_then(Json::as_str))
        }) {
            let field = if figures.model.is_some() {
                "the report's `Model:` line".to_string()
            } else {
                dump_field("model")
            };
            key.model = Part::read(model_name(model), field);
        }
        key.workload = workload(arguments, &dump_field);
        if let Some(measured) = self.measured_workload(
            arguments,
            dump_line,
            previous_end.max(dump.map_or(0, |(at, _)| at))..block.start,
            &figures,
            path,
            warnings,
        ) {
            key.workload = Some(measured);
        }
        key.backend = match (block.tool, figures.backend.as_deref()) {
            (Tool::Trtllm, _) => Part::inferred(
                "trtllm",
                "trtllm-bench runs TensorRT-LLM in its own process",
            ),
            (Tool::Sglang, Some(backend)) if backend.starts_with("sglang") => Part::inferred(
                "sglang",
                format!("the SGLang block's `Backend: {backend}` (an SGLang server's own API)"),
            ),
            _ => None,
        };
        let (tool, what) = match block.tool {
            Tool::Vllm => ("vLLM", "vLLM's `Serving Benchmark Result` block"),
            Tool::Sglang => ("SGLang", "SGLang's `Serving Benchmark Result` block"),
            Tool::Trtllm => ("trtllm-bench", "trtllm-bench's report"),
        };
        notes.push(format!(
            "the figures of {what} (lines {}–{}), as printed: rounded by the tool{}",
            block.start + 1,
            block.end + 1,
            if figures.means_from_totals {
                "; mean prompt and completion tokens are its totals over its successful requests"
            } else {
                ""
            }
        ));
        if dump.is_none() && block.tool != Tool::Trtllm {
            notes.push(format!(
                "no argument dump precedes the block: the {tool} run's model and workload are not in the log"
            ));
        }
        let mut fields = arguments.cloned().unwrap_or_default();
        for (label, value) in &figures.figures {
            fields.insert(label.clone(), serde_json::json!(value));
        }
        let expected_rows = figures
            .failed
            .and(argument("num_prompts").and_then(Json::as_u64))
            .and_then(|sent| u32::try_from(sent).ok());
        RunRecord {
            record: index,
            line: Some(block.start as u64 + 1),
            fields: Json::Object(fields),
            key,
            requests: Vec::new(),
            has_requests: false,
            expected_rows,
            completed: figures.completed,
            failed: figures.failed,
            duration_s: figures.duration_s,
            reported: figures.columns,
            reported_figures: figures.figures,
            wall_derived: false,
            notes,
            settings: figures.settings,
            rejected: None,
            ..RunRecord::default()
        }
    }

    /// The workload a run measured when its argument dump says another: the prompt and output lengths of vLLM's
    /// dataset line (`Sampling input_len from [20000, 20000] and output_len from [128, 128]`, the last in `range`),
    /// else the mean prompt of the block's token totals, when they differ from the dump's random lengths by more
    /// than its range ratio allows. The measured lengths key the cell, with a `workload_differs` warning naming
    /// both; `None` when they agree or there is nothing to measure by.
    fn measured_workload(
        &self,
        arguments: Option<&Map<String, Json>>,
        dump_line: usize,
        range: std::ops::Range<usize>,
        figures: &Figures,
        path: &str,
        warnings: &mut Vec<Warning>,
    ) -> Option<Part> {
        let arguments = arguments?;
        let dataset = arguments.get("dataset_name").and_then(Json::as_str)?;
        let length = |name: &str| arguments.get(name).and_then(Json::as_u64);
        let (stated_input, stated_output) =
            (length("random_input_len")?, length("random_output_len")?);
        if !dataset.starts_with("random") {
            return None;
        }
        let prefix = length("random_prefix_len").unwrap_or(0);
        let ratio = arguments
            .get("random_range_ratio")
            .and_then(Json::as_f64)
            .unwrap_or(0.0);
        let (input, output, evidence, line) = match self.sampling_line(range) {
            Some((input, output, at)) => (
                input,
                output.unwrap_or(stated_output),
                format!("line {} `{}`", at + 1, self.lines[at].trim()),
                at,
            ),
            None => {
                let mean = figures
                    .columns
                    .get(Stat::MeanPromptTokens.name())
                    .filter(|_| figures.means_from_totals)?;
                (
                    mean.round() as u64,
                    stated_output,
                    format!(
                        "the block's `Total input tokens` over its successful requests ({mean:.1} per prompt)"
                    ),
                    dump_line.saturating_sub(1),
                )
            }
        };
        let sent = (stated_input + prefix) as f64;
        let tolerance = ratio.max(0.0) + 0.1;
        let input_agrees = (input as f64 - sent).abs() <= tolerance * sent.max(1.0)
            || (input as f64 - stated_input as f64).abs()
                <= tolerance * (stated_input as f64).max(1.0);
        if input_agrees && output == stated_output {
            return None;
        }
        let measured = format!("{dataset}_{input}x{output}");
        warnings.push(
            Warning::warn(
                "workload_differs",
                format!(
                    "the argument dump at line {dump_line} says {dataset}_{stated_input}x{stated_output} \
                     (`random_input_len={stated_input}`, `random_output_len={stated_output}`) but {evidence} shows \
                     what was sent: the run is keyed by the measured workload {measured}"
                ),
            )
            .file(path)
            .line(line as u64 + 1),
        );
        Part::read(measured, evidence)
    }

    /// The last dataset line of vLLM's random sampler in `range`: the prompt length (the middle of the sampled
    /// range), the output length when the line states it, and the line's index. vLLM prints
    /// `Sampling input_len from [a, b] and output_len from [c, d]`; older versions print the two on lines of their
    /// own.
    fn sampling_line(&self, range: std::ops::Range<usize>) -> Option<(u64, Option<u64>, usize)> {
        let middle = |text: &str, what: &str| -> Option<u64> {
            let rest = &text[text.find(what)? + what.len()..];
            let inside = rest.trim_start().strip_prefix('[')?.split(']').next()?;
            let (low, high) = inside.split_once(',')?;
            let (low, high) = (
                low.trim().parse::<u64>().ok()?,
                high.trim().parse::<u64>().ok()?,
            );
            Some((low + high) / 2)
        };
        let mut output = None;
        for at in range.rev() {
            let line = &self.lines[at];
            if output.is_none() {
                output = middle(line, "output_len from");
            }
            if let Some(input) = middle(line, "Sampling input_len from") {
                return Some((input, output, at));
            }
        }
        None
    }

    /// The load vLLM prints before running (`Maximum request concurrency: 8`, `Traffic request rate: inf`), the
    /// last such lines in `range`.
    fn progress_load(&self, range: std::ops::Range<usize>) -> (Option<Part>, Option<Part>) {
        let (mut n, mut rate) = (None, None);
        for at in range.rev() {
            let Some((label, value)) = label_value(&self.lines[at]) else {
                continue;
            };
            let field = format!("line {} `{label}`", at + 1);
            match label {
                "Maximum request concurrency" if n.is_none() => {
                    n = value
                        .parse::<u32>()
                        .ok()
                        .filter(|n| *n >= 1)
                        .and_then(|n| Part::read(n.to_string(), field));
                }
                "Traffic request rate" if rate.is_none() => {
                    rate = number(value)
                        .and_then(cellscope_model::RateRps::new)
                        .and_then(|rate| Part::read(rate.to_string(), field));
                }
                _ => {}
            }
        }
        (n, rate)
    }

    /// The load of the last command line echoed in `range` that states one (`--max-concurrency 8`,
    /// `--concurrency 8`, `--request-rate 4`).
    fn command_load(&self, range: std::ops::Range<usize>) -> (Option<Part>, Option<Part>) {
        for at in range.rev() {
            let words: Vec<&str> = self.lines[at].split_whitespace().collect();
            let rule = format!("the command line echoed at line {}", at + 1);
            let (mut n, mut rate) = (None, None);
            for (position, word) in words.iter().enumerate() {
                let (flag, value) = match word.split_once('=') {
                    Some((flag, value)) => (flag, Some(value)),
                    None => (*word, words.get(position + 1).copied()),
                };
                let Some(value) = value else { continue };
                match flag {
                    "--max-concurrency" | "--concurrency" | "--max_concurrency" => {
                        n = value
                            .parse::<u32>()
                            .ok()
                            .filter(|n| *n >= 1)
                            .and_then(|n| Part::inferred(n.to_string(), rule.clone()));
                    }
                    "--request-rate" | "--request_rate" => {
                        rate = number(value)
                            .and_then(cellscope_model::RateRps::new)
                            .and_then(|rate| Part::inferred(rate.to_string(), rule.clone()));
                    }
                    _ => {}
                }
            }
            if n.is_some() || rate.is_some() {
                return (n, rate);
            }
        }
        (None, None)
    }
}

/// Whether two argument dumps are of one run: the same model, load, prompt count, dataset and output file.
fn same_run(left: &Map<String, Json>, right: &Map<String, Json>) -> bool {
    [
        "model",
        "request_rate",
        "max_concurrency",
        "num_prompts",
        "dataset_name",
        "output_file",
    ]
    .iter()
    .all(|name| left.get(*name) == right.get(*name))
}

/// The workload an argument dump states: a random dataset with its lengths (`random_1024x128`), else the dataset.
fn workload(
    arguments: Option<&Map<String, Json>>,
    dump_field: &dyn Fn(&str) -> String,
) -> Option<Part> {
    let arguments = arguments?;
    let dataset = arguments.get("dataset_name").and_then(Json::as_str)?;
    let length = |name: &str| arguments.get(name).and_then(Json::as_u64);
    match (length("random_input_len"), length("random_output_len")) {
        (Some(input), Some(output)) if dataset.starts_with("random") => Part::read(
            format!("{dataset}_{input}x{output}"),
            format!(
                "{}, `random_input_len`, `random_output_len`",
                dump_field("dataset_name")
            ),
        ),
        _ => Part::read(dataset, dump_field("dataset_name")),
    }
}

/// The `= TITLE` of a trtllm-bench report heading line.
fn report_heading(line: &str) -> Option<String> {
    let title = line.trim().strip_prefix("= ")?.trim();
    let upper = title.to_ascii_uppercase();
    [
        "ENGINE DETAILS",
        "PYTORCH BACKEND",
        "_AUTODEPLOY BACKEND",
        "AUTODEPLOY BACKEND",
        "MACHINE DETAILS",
        "WORLD + RUNTIME INFORMATION",
        "REQUEST DETAILS",
        "PERFORMANCE OVERVIEW",
        "STATISTICS",
        "DECODING STATISTICS",
    ]
    .iter()
    .any(|known| upper.starts_with(known))
    .then_some(upper)
}

/// The heading a report opens with (a second one starts the next report).
fn is_report_start(heading: &str) -> bool {
    heading.contains("BACKEND") || heading == "ENGINE DETAILS"
}

/// The section with the run's figures (`STATISTICS` in older trtllm-bench).
fn is_performance(heading: &str) -> bool {
    heading == "PERFORMANCE OVERVIEW" || heading == "STATISTICS"
}

// ---------------------------------------------------------------------------------------------------------------
// Figures

/// A block's figures: the counts, the columns, every number under its label, and what else it states.
#[derive(Default)]
struct Figures {
    completed: Option<u32>,
    failed: Option<u32>,
    duration_s: Option<f64>,
    columns: BTreeMap<String, f64>,
    figures: BTreeMap<String, f64>,
    concurrency: Option<Part>,
    rate: Option<Part>,
    model: Option<String>,
    backend: Option<String>,
    settings: Vec<Setting>,
    means_from_totals: bool,
}

/// Labels whose value is text, never a figure.
const TEXT_LABELS: [&str; 10] = [
    "Backend",
    "Model",
    "Model Path",
    "Engine Directory",
    "Dtype",
    "KV Cache Dtype",
    "Quantization",
    "Scheduling Policy",
    "TensorRT LLM Version",
    "TensorRT-LLM Version",
];

impl Figures {
    fn of(block: &Block, path: &str, warnings: &mut Vec<Warning>) -> Figures {
        let mut figures = Figures::default();
        let mut totals = (None, None);
        for (section, label, value, at) in &block.entries {
            let field = format!("line {} `{label}`", at + 1);
            if figures.text(block.tool, label, value, &field) {
                continue;
            }
            if ["None", "N/A", "not set", "-", ""].contains(&value.as_str()) {
                continue;
            }
            let Some(number) = number(value.trim_end_matches('%')) else {
                warnings.push(
                    Warning::warn(
                        "invalid_figure",
                        format!("`{label}` is `{value}`, not a number; the figure is left out"),
                    )
                    .file(path)
                    .line(*at as u64 + 1),
                );
                continue;
            };
            let key = if section.is_empty() || !label.starts_with('[') {
                label.clone()
            } else {
                format!("{section}.{label}")
            };
            figures.figures.entry(key).or_insert(number);
            match block.tool {
                Tool::Trtllm => figures.trtllm(label, number, &field),
                Tool::Vllm | Tool::Sglang => figures.serving(label, number, &mut totals),
            }
        }
        if let Some(completed) = figures.completed.filter(|count| *count > 0) {
            let count = f64::from(completed);
            for (column, total) in [
                (Stat::MeanPromptTokens, totals.0),
                (Stat::MeanCompletionTokens, totals.1),
            ] {
                if let Some(total) = total {
                    figures
                        .columns
                        .entry(column.name().to_string())
                        .or_insert(total / count);
                    figures.means_from_totals = true;
                }
            }
        }
        figures
    }

    /// A label whose value is text or a load: taken, and `true`.
    fn text(&mut self, tool: Tool, label: &str, value: &str, field: &str) -> bool {
        match label {
            "Maximum request concurrency" | "Max request concurrency" => {
                if let Ok(n) = value.parse::<u32>()
                    && n >= 1
                {
                    self.concurrency = Part::read(n.to_string(), field);
                }
                true
            }
            "Request rate configured (RPS)" | "Traffic request rate" => {
                if let Some(rate) = number(value).and_then(cellscope_model::RateRps::new) {
                    self.rate = Part::read(rate.to_string(), field);
                }
                true
            }
            "Issue Rate (req/sec)" if tool == Tool::Trtllm => {
                if let Some(rate) = number(value) {
                    self.figures.insert(label.to_string(), rate);
                    // trtllm-bench queues every request up front: its issue rate is then astronomically high.
                    let all_at_once = rate >= 1e6;
                    let shown = if all_at_once {
                        "inf".to_string()
                    } else {
                        value.to_string()
                    };
                    self.rate = cellscope_model::RateRps::new(if all_at_once {
                        f64::INFINITY
                    } else {
                        rate
                    })
                    .and_then(|rate| {
                        Part::inferred(
                            rate.to_string(),
                            format!(
                                "{field}: {shown}{}",
                                if all_at_once {
                                    " (every request issued at once)"
                                } else {
                                    " (the measured issue rate)"
                                }
                            ),
                        )
                    });
                }
                true
            }
            _ if TEXT_LABELS.contains(&label) => {
                self.setting(label, value, field);
                true
            }
            _ => false,
        }
    }

    /// The text lines that state the model, the engine's backend or its deployment.
    fn setting(&mut self, label: &str, value: &str, field: &str) {
        let value = value.trim();
        if value.is_empty() || value == "None" {
            return;
        }
        let name = match label {
            "Model" => {
                self.model = Some(value.to_string());
                return;
            }
            "Backend" => {
                self.backend = Some(value.to_string());
                return;
            }
            "Quantization" => "precision",
            "KV Cache Dtype" => "kv_cache_dtype",
            "TensorRT LLM Version" | "TensorRT-LLM Version" => "engine_version",
            _ => return,
        };
        self.settings
            .push(Setting::new(name, value, How::Read(field.to_string())));
    }

    /// A vLLM or SGLang figure: counts, totals, rates and the `Mean/Median/Pnn <metric> (ms)` statistics.
    fn serving(&mut self, label: &str, value: f64, totals: &mut (Option<f64>, Option<f64>)) {
        let count = || (value >= 0.0 && value.fract() == 0.0).then_some(value as u32);
        match label {
            "Successful requests" => self.completed = count(),
            "Failed requests" => self.failed = count(),
            "Benchmark duration (s)" => self.duration_s = Some(value),
            "Total input tokens" => totals.0 = Some(value),
            "Total generated tokens" => totals.1 = Some(value),
            "Request throughput (req/s)" => self.column(Stat::RequestThroughputRps, value),
            "Output token throughput (tok/s)" => self.column(Stat::AggregateTps, value),
            "Total Token throughput (tok/s)" | "Total token throughput (tok/s)" => {
                self.column(Stat::TotalTps, value);
            }
            _ => {
                if let Some(column) = statistic_column(label) {
                    self.columns.entry(column).or_insert(value);
                }
            }
        }
    }

    /// A trtllm-bench figure (ms and tokens/sec; an older report's total latency in seconds).
    fn trtllm(&mut self, label: &str, value: f64, field: &str) {
        match label {
            "Number of requests" => {
                self.completed = (value >= 0.0 && value.fract() == 0.0).then_some(value as u32);
            }
            "Average Input Length (tokens)" => self.column(Stat::MeanPromptTokens, value),
            "Average Output Length (tokens)" => self.column(Stat::MeanCompletionTokens, value),
            "Request Throughput (req/sec)" => self.column(Stat::RequestThroughputRps, value),
            "Total Output Throughput (tokens/sec)" | "Token Throughput (tokens/sec)" => {
                self.column(Stat::AggregateTps, value);
            }
            "Total Token Throughput (tokens/sec)" => self.column(Stat::TotalTps, value),
            "Total Latency (ms)" => self.duration_s = Some(value / 1000.0),
            "Total Latency (seconds)" => self.duration_s = Some(value),
            "Average request latency (ms)" => self.column(Stat::MeanWallMs, value),
            "Average time-to-first-token [TTFT] (ms)" => self.column(Stat::MeanTtftMs, value),
            "Average time-per-output-token [TPOT] (ms)" => self.column(Stat::MeanTpotMs, value),
            "TP Size" | "PP Size" | "EP Size" => {
                let name = label[..2].to_ascii_lowercase();
                self.settings.push(Setting::new(
                    &name,
                    &format!("{value}"),
                    How::Read(field.to_string()),
                ));
            }
            _ => {
                if let Some(column) = breakdown_column(label) {
                    self.columns.entry(column).or_insert(value);
                }
            }
        }
    }

    fn column(&mut self, stat: Stat, value: f64) {
        self.columns.entry(stat.name().to_string()).or_insert(value);
    }
}

/// The cells-table column of `Mean TTFT (ms)`, `Median TPOT (ms)`, `P99 ITL (ms)`, `P90 E2EL (ms)`,
/// `Mean E2E Latency (ms)`: only those the table has.
fn statistic_column(label: &str) -> Option<String> {
    let text = label.strip_suffix(" (ms)")?;
    let (stat, metric) = text.split_once(' ')?;
    let stat = match stat {
        "Mean" => "mean".to_string(),
        "Median" => "p50".to_string(),
        _ => {
            let percentile = stat.strip_prefix('P')?;
            percentile.parse::<f64>().ok()?;
            format!("p{percentile}")
        }
    };
    let metric = match metric {
        "TTFT" => "ttft",
        "TPOT" => "tpot",
        "ITL" => "itl",
        "E2EL" | "E2E Latency" => "wall",
        _ => return None,
    };
    let column = format!("{stat}_{metric}_ms");
    crate::records::STAT_COLUMNS
        .contains(&column.as_str())
        .then_some(column)
}

/// The column of a trtllm-bench breakdown line: `[TTFT] P50`, `[TPOT] AVERAGE`, `[Latency] P99`.
fn breakdown_column(label: &str) -> Option<String> {
    let (metric, stat) = label.strip_prefix('[')?.split_once(']')?;
    let metric = match metric {
        "TTFT" => "ttft",
        "TPOT" => "tpot",
        "Latency" => "wall",
        _ => return None,
    };
    let stat = match stat.trim() {
        "AVERAGE" => "mean".to_string(),
        other => other
            .strip_prefix('P')?
            .parse::<u32>()
            .ok()
            .map(|p| format!("p{p}"))?,
    };
    let column = format!("{stat}_{metric}_ms");
    crate::records::STAT_COLUMNS
        .contains(&column.as_str())
        .then_some(column)
}

// ---------------------------------------------------------------------------------------------------------------
// The argument dump

/// The arguments of `Namespace(a=1, b='x', c=None, ...)` from the text after `Namespace(`: Python reprs as JSON
/// (strings, numbers, `None` as null, `True`/`False`, `inf` as the text "inf"; lists and dicts as their text).
fn namespace(text: &str) -> Map<String, Json> {
    let mut arguments = Map::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches([',', ' ']);
        let Some((name, after)) = rest.split_once('=') else {
            break;
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            break;
        }
        let (value, remaining) = python_value(after);
        arguments.insert(name.to_string(), value);
        rest = remaining;
        if rest.trim_start().starts_with(')') || rest.is_empty() {
            break;
        }
    }
    arguments
}

/// One Python repr at the start of `text`, and the text after it.
fn python_value(text: &str) -> (Json, &str) {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut end = text.len();
    for (at, c) in text.char_indices() {
        if let Some(open) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == open {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' | '{' | '(' => depth += 1,
            ']' | '}' => depth -= 1,
            ')' if depth == 0 => {
                end = at;
                break;
            }
            ')' => depth -= 1,
            ',' if depth == 0 => {
                end = at;
                break;
            }
            _ => {}
        }
    }
    let raw = text[..end].trim();
    let value = match raw {
        "None" => Json::Null,
        "True" => Json::Bool(true),
        "False" => Json::Bool(false),
        "inf" => Json::String("inf".to_string()),
        _ if raw.len() >= 2
            && (raw.starts_with('\'') && raw.ends_with('\'')
                || raw.starts_with('"') && raw.ends_with('"')) =>
        {
            Json::String(raw[1..raw.len() - 1].to_string())
        }
        _ => match raw.parse::<i64>() {
            Ok(integer) => Json::from(integer),
            Err(_) => raw
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| Json::String(raw.to_string()), Json::Number),
        },
    };
    (value, &text[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_through_colours_progress_bars_and_prefixes() {
        assert_eq!(
            clean("\u{1b}[32mMean TTFT (ms):\u{1b}[0m   12.5\r"),
            "Mean TTFT (ms):   12.5"
        );
        assert_eq!(
            clean(" 50%|##   | 5/10\r100%|#####| 10/10\rSuccessful requests: 10"),
            "Successful requests: 10"
        );
        assert_eq!(
            clean("INFO 03-01 12:00:00 [serve.py:123] Traffic request rate: inf"),
            "Traffic request rate: inf"
        );
        assert_eq!(
            clean("[2026-03-01 12:00:00] Backend: sglang"),
            "Backend: sglang"
        );
        assert_eq!(
            clean("2026-03-01 12:00:00,123 - INFO - Successful requests: 3"),
            "Successful requests: 3"
        );
        assert_eq!(clean("bench-1  | Failed requests: 0"), "Failed requests: 0");
    }

    #[test]
    fn a_namespace_dump_reads_as_arguments() {
        let arguments = namespace(
            "backend='vllm', model='meta-llama/Llama-3.1-8B', request_rate=inf, max_concurrency=None, \
             metric_percentiles='99', goodput=None, extra={'a': (1, 2)}, num_prompts=200, ratio=0.5, flag=True)",
        );
        assert_eq!(arguments["backend"], "vllm");
        assert_eq!(arguments["model"], "meta-llama/Llama-3.1-8B");
        assert_eq!(arguments["request_rate"], "inf");
        assert_eq!(arguments["max_concurrency"], Json::Null);
        assert_eq!(arguments["extra"], "{'a': (1, 2)}");
        assert_eq!(arguments["num_prompts"], 200);
        assert_eq!(arguments["ratio"], 0.5);
        assert_eq!(arguments["flag"], true);
    }

    #[test]
    fn sglangs_two_dumps_of_one_run_are_one_run() {
        let lines: Vec<String> = [
            "benchmark_args=Namespace(backend='sglang', port=None, model='m', request_rate=inf, max_concurrency=8)",
            "Server ready in 0.0s.",
            "Namespace(backend='sglang', port=30000, model='m', request_rate=inf, max_concurrency=8)",
            "Traceback (most recent call last):",
        ]
        .iter()
        .map(|line| clean(line))
        .collect();
        let mut warnings = Vec::new();
        let log = Log::read(&lines, "x.log", &mut warnings);
        assert_eq!(log.dumps.len(), 1);
        assert!(log.records("x.log", &mut warnings).is_empty());
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].line, Some(1));
        assert_eq!(number("inf RPS."), Some(f64::INFINITY));
    }

    #[test]
    fn statistic_labels_become_columns() {
        assert_eq!(
            statistic_column("Median TTFT (ms)").as_deref(),
            Some("p50_ttft_ms")
        );
        assert_eq!(
            statistic_column("P99 E2EL (ms)").as_deref(),
            Some("p99_wall_ms")
        );
        assert_eq!(
            statistic_column("Mean E2E Latency (ms)").as_deref(),
            Some("mean_wall_ms")
        );
        assert_eq!(statistic_column("P90 TTFT (ms)"), None);
        assert_eq!(
            breakdown_column("[TPOT] P50").as_deref(),
            Some("p50_tpot_ms")
        );
        assert_eq!(
            breakdown_column("[Latency] AVERAGE").as_deref(),
            Some("mean_wall_ms")
        );
        assert_eq!(breakdown_column("[GTPS] P50"), None);
    }
}
