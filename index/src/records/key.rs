//! The cell key of another tool's record: `cellscope.toml` first, then what the file states, then the default
//! rules. Every value that was not read from the file is returned with the rule that produced it, so the audit
//! and `cellscope index --explain` can show it.

use super::config;
use crate::mapping::{Mapping, TemplateContext};
use crate::run::record::{How, Part, RunRecord};
use cellscope_model::api::Warning;
use cellscope_model::config::Config;
use cellscope_model::key::CellCoordinates;
use cellscope_model::origin::InferredPart;
use cellscope_model::{Load, RateRps, engine};
use config::how_text;
use std::collections::{BTreeMap, BTreeSet};

mod reps;

/// A record with its cell coordinates.
pub(crate) struct KeyedRecord {
    pub file: String,
    pub record: RunRecord,
    pub coordinates: CellCoordinates,
    pub inferred: Vec<InferredPart>,
    /// Dimension → the field it was read from, for `--explain`.
    pub read: Vec<(String, String)>,
    /// The configuration with where each parameter was found, for `--explain`.
    pub config: config::Resolved,
}

/// The coordinates a record was given, as warnings name them.
pub(super) fn coordinates_text(coordinates: &CellCoordinates) -> String {
    let config = if coordinates.config.is_empty() {
        String::new()
    } else {
        format!(" config={}", coordinates.config)
    };
    format!(
        "suite={} phase={} backend={} model={} workload={}{config} {} rep={}",
        coordinates.suite,
        coordinates.phase,
        coordinates.backend,
        coordinates.model,
        coordinates.workload,
        coordinates.load,
        coordinates.rep
    )
}

/// The text `--explain` prints for each dimension of a keyed record: `(dimension, value, how)`.
pub(crate) fn explain_rules(keyed: &KeyedRecord) -> Vec<(String, String, String)> {
    let coordinates = &keyed.coordinates;
    let values = [
        ("suite", coordinates.suite.clone()),
        ("phase", coordinates.phase.clone()),
        ("backend", coordinates.backend.clone()),
        ("model", coordinates.model.clone()),
        ("workload", coordinates.workload.clone()),
        (
            match coordinates.load {
                Load::Rate(_) => "rate",
                _ => "n",
            },
            match coordinates.load {
                Load::Concurrency(n) => n.to_string(),
                Load::Rate(rate) => rate.to_string(),
                Load::Unstated => "unstated".to_string(),
            },
        ),
        ("rep", coordinates.rep.to_string()),
    ];
    values
        .into_iter()
        .map(|(dimension, value)| {
            let how = keyed
                .inferred
                .iter()
                .find(|part| part.dimension == dimension)
                .map(|part| format!("inferred: {}", part.rule))
                .or_else(|| {
                    keyed
                        .read
                        .iter()
                        .find(|(name, _)| name == dimension)
                        .map(|(_, field)| format!("read from {field}"))
                })
                .unwrap_or_default();
            (dimension.to_string(), value, how)
        })
        .collect()
}

/// The engines the components name (a component, or a `-`/`_`/`.`/`=`-separated part of one), by canonical name.
fn engines_in<'a>(components: impl Iterator<Item = &'a str>) -> BTreeSet<&'static str> {
    let mut found = BTreeSet::new();
    for component in components {
        if let Some(engine) = engine::canonical(component) {
            found.insert(engine);
            continue;
        }
        for part in component.split(['-', '_', '.', '=']) {
            if let Some(engine) = engine::canonical(part) {
                found.insert(engine);
            }
        }
    }
    found
}

/// An engine name in the path (its directories and file name), if exactly one engine appears.
fn engine_in_path(path: &str) -> Option<String> {
    the_one_engine_in(path.split('/')).map(str::to_string)
}

/// The engine the file's folders name (its directories only, not the file's own name), if exactly one appears.
fn engine_in_folders(path: &str) -> Option<&'static str> {
    the_one_engine_in(crate::storage::parent(path).split('/'))
}

/// The engine the components name, when they name exactly one.
fn the_one_engine_in<'a>(components: impl Iterator<Item = &'a str>) -> Option<&'static str> {
    let found = engines_in(components);
    (found.len() == 1).then(|| found.into_iter().next().unwrap_or_default())
}

/// An offered request rate in the path: `request_rate=4`, `request_rate_4`, `rate=2.5`, `rate4`, `qps8` as a
/// component (or one ending a component after `-`/`_`). The innermost wins.
fn rate_in_path(path: &str) -> Option<(RateRps, String)> {
    let components: Vec<&str> = path.split('/').collect();
    for component in components.iter().rev().skip(1) {
        let lower = component.to_ascii_lowercase();
        let tail = lower.rsplit(['-', '/']).next().unwrap_or(&lower);
        for prefix in [
            "request_rate=",
            "request_rate_",
            "request_rate",
            "rate=",
            "rate_",
            "rate",
            "qps",
        ] {
            if let Some(rate) = tail
                .strip_prefix(prefix)
                .and_then(|rest| rest.parse::<RateRps>().ok())
            {
                return Some((rate, format!("the directory name `{component}`")));
            }
        }
    }
    None
}

/// A load level in the path: `concurrency8`, `concurrency_8`, `max_concurrency=8`, `c8`, `n8` as a component,
/// or `-concurrency8` inside a component (the AIPerf/GenAI-Perf artifact name). The innermost wins.
fn n_in_path(path: &str) -> Option<(u32, String)> {
    let components: Vec<&str> = path.split('/').collect();
    for component in components.iter().rev().skip(1) {
        let lower = component.to_ascii_lowercase();
        for prefix in ["max_concurrency=", "concurrency_", "concurrency", "c", "n"] {
            if let Some(rest) = lower.strip_prefix(prefix)
                && let Ok(n) = rest.parse::<u32>()
            {
                return Some((n, format!("the directory name `{component}`")));
            }
        }
        for marker in ["-concurrency", "_concurrency", "max_concurrency="] {
            if let Some(position) = lower.rfind(marker) {
                let digits: String = lower[position + marker.len()..]
                    .trim_start_matches(['_', '='])
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let Ok(n) = digits.parse::<u32>() {
                    return Some((n, format!("the directory name `{component}`")));
                }
            }
        }
    }
    None
}

/// Resolves the key of every record of one run. A record without any load is kept at [`Load::Unstated`] (with an
/// `info` warning). Records that would share a key but differ in a setting they record are kept apart by it
/// (`records_differ`, [`reps`]); `rep`s not stated are numbered in file and record order among records with the
/// same other key, the configuration included (two deployments are never reps of one cell).
pub(super) fn resolve(
    format: &str,
    mapping: &Mapping,
    run_id: &str,
    records: Vec<(String, RunRecord)>,
    warnings: &mut Vec<Warning>,
) -> Vec<KeyedRecord> {
    let drafts: Vec<Draft> = records
        .into_iter()
        .filter_map(|(file, record)| draft(format, mapping, run_id, file, record, warnings))
        .collect();
    number(reps::separate(drafts, run_id, warnings), run_id, warnings)
}

/// A record keyed but for its repetition.
pub(super) struct Draft {
    pub file: String,
    pub record: RunRecord,
    /// The coordinates at rep 0, which stand for the key without its rep.
    pub coordinates: CellCoordinates,
    /// The repetition the file or `cellscope.toml` states; `None` when it is numbered by order.
    pub rep: Option<u32>,
    pub inferred: Vec<InferredPart>,
    pub read: Vec<(String, String)>,
    pub config: config::Resolved,
}

/// One record keyed but for its repetition; `None` (with a warning) when its load or stated repetition is not a
/// number.
fn draft(
    format: &str,
    mapping: &Mapping,
    run_id: &str,
    file: String,
    mut record: RunRecord,
    warnings: &mut Vec<Warning>,
) -> Option<Draft> {
    let mut parts = Parts {
        mapping,
        context: TemplateContext {
            path: &file,
            record: &record.fields,
        },
        run_id,
        line: record.line,
        inferred: Vec::new(),
        read: Vec::new(),
    };
    let resolved = parts.resolve_config(format, &record, warnings);
    let ([suite, phase, backend, model, workload], note) =
        parts.named_dimensions(format, &record, &resolved, warnings);
    let load = parts.load(&record, warnings)?;
    parts.note_inferred_config(&resolved);
    let rep = parts.stated_rep(&record, warnings).ok()?;
    let (inferred, read) = (parts.inferred, parts.read);
    record.notes.extend(note);
    Some(Draft {
        coordinates: CellCoordinates {
            suite,
            phase,
            backend,
            model,
            workload,
            config: resolved.config.clone(),
            load,
            rep: 0,
        },
        file,
        record,
        rep,
        inferred,
        read,
        config: resolved,
    })
}

/// The drafts with their repetitions: stated, else the order among records with the same other key. A record whose
/// whole key an earlier one has is left out with a `duplicate_cell` warning, so no cell is counted twice.
fn number(drafts: Vec<Draft>, run_id: &str, warnings: &mut Vec<Warning>) -> Vec<KeyedRecord> {
    let mut next_rep: BTreeMap<CellCoordinates, u32> = BTreeMap::new();
    let mut seen: BTreeSet<CellCoordinates> = BTreeSet::new();
    let mut keyed = Vec::with_capacity(drafts.len());
    for mut draft in drafts {
        let mut coordinates = draft.coordinates;
        let order = *next_rep.get(&coordinates).unwrap_or(&0);
        next_rep.insert(coordinates.clone(), order + 1);
        coordinates.rep = draft.rep.unwrap_or_else(|| {
            draft.inferred.push(InferredPart {
                dimension: "rep".to_string(),
                value: order.to_string(),
                rule: "the order of records with the same other key (file, then record order)"
                    .to_string(),
            });
            order
        });
        if !seen.insert(coordinates.clone()) {
            warnings.push(
                Warning::error(
                    "duplicate_cell",
                    format!(
                        "record {} has the same cell key as an earlier record of this run ({}); it is left out \
                         so no cell is counted twice (map rep in cellscope.toml to tell them apart)",
                        draft.record.record,
                        coordinates_text(&coordinates)
                    ),
                )
                .run(run_id)
                .file(&draft.file)
                .at_line(draft.record.line),
            );
            continue;
        }
        keyed.push(KeyedRecord {
            file: draft.file,
            record: draft.record,
            coordinates,
            inferred: draft.inferred,
            read: draft.read,
            config: draft.config,
        });
    }
    keyed
}

/// The parts of one record's key as they are decided, each noted as read (with its field) or inferred (with its
/// rule).
struct Parts<'a> {
    mapping: &'a Mapping,
    context: TemplateContext<'a>,
    run_id: &'a str,
    line: Option<u64>,
    inferred: Vec<InferredPart>,
    read: Vec<(String, String)>,
}

impl Parts<'_> {
    /// A dimension's value: `cellscope.toml`'s, else the record's own, else the default rule's.
    fn take(
        &mut self,
        dimension: &str,
        stated: Option<Part>,
        default: &dyn Fn() -> Option<Part>,
        warnings: &mut Vec<Warning>,
    ) -> Option<String> {
        let mapped = match self.mapping.value(dimension, &self.context) {
            Some(Ok(mapped)) => Part::inferred(mapped.value, mapped.rule),
            Some(Err(reason)) => {
                warnings.push(
                    Warning::warn(
                        "mapping_field_missing",
                        format!("{reason}; the default rule for {dimension} is used instead"),
                    )
                    .run(self.run_id)
                    .file(self.context.path)
                    .at_line(self.line),
                );
                None
            }
            None => None,
        };
        let part = mapped.or(stated).or_else(default)?;
        match part.how {
            How::Read(field) => self.read.push((dimension.to_string(), field)),
            How::Inferred(rule) => self.inferred.push(InferredPart {
                dimension: dimension.to_string(),
                value: part.value.clone(),
                rule,
            }),
        }
        Some(part.value)
    }

    /// A dimension's value as [`Parts::take`] gives it, whose default rule gives `value`, as `rule` says.
    fn take_or(
        &mut self,
        dimension: &str,
        stated: Option<Part>,
        value: &str,
        rule: &str,
        warnings: &mut Vec<Warning>,
    ) -> Option<String> {
        self.take(dimension, stated, &|| Part::inferred(value, rule), warnings)
    }

    /// Suite, phase, backend, model and workload, each with its default rule, and a note when the backend was
    /// written otherwise than its engine's one name.
    fn named_dimensions(
        &mut self,
        format: &str,
        record: &RunRecord,
        resolved: &config::Resolved,
        warnings: &mut Vec<Warning>,
    ) -> ([String; 5], Option<String>) {
        let file = self.context.path;
        let stated_engine = stated_engine(record, resolved);
        let suite = self.take_or(
            "suite",
            record.key.suite.clone(),
            format,
            "the format's name (the file records no suite)",
            warnings,
        );
        let phase = self.take_or(
            "phase",
            record.key.phase.clone(),
            "sweep",
            "`sweep` (the file records no phase)",
            warnings,
        );
        let backend = self.take(
            "backend",
            stated_engine.clone(),
            &|| match engine_in_path(file) {
                Some(engine) => Part::inferred(
                    engine,
                    "an engine name in the file's path (the tool's `backend` field is the request protocol)",
                ),
                None => Part::inferred(
                    "unknown",
                    "no engine is recorded in the file or its path; set backend in cellscope.toml",
                ),
            },
            warnings,
        );
        let model = self.take_or(
            "model",
            record.key.model.clone(),
            "unknown",
            "the file records no model; set model in cellscope.toml",
            warnings,
        );
        // Measured token means differ from cell to cell, so they would split one sweep into as many workloads as it
        // has cells; one shared value keeps the sweep's curve together.
        let workload = self.take_or(
            "workload",
            record.key.workload.clone(),
            "unknown",
            "the file records no workload, dataset or configured lengths; set workload in cellscope.toml",
            warnings,
        );
        self.warn_path_disagreements(record, stated_engine.as_ref(), warnings);
        let (backend, note) = self.one_engine_name(backend);
        (
            [suite, phase, backend, model, workload].map(Option::unwrap_or_default),
            note,
        )
    }

    /// The backend by its engine's one name ([`engine::backend_name`]); when it was written otherwise, the name as
    /// written is kept where the backend was found (`--explain`, the inferred part's rule) and in a note.
    fn one_engine_name(&mut self, backend: Option<String>) -> (Option<String>, Option<String>) {
        let Some(written) = backend else {
            return (None, None);
        };
        let name = engine::backend_name(&written);
        if name == written {
            return (Some(name), None);
        }
        let as_written = format!(" (written `{written}`)");
        if let Some((_, field)) = self
            .read
            .iter_mut()
            .find(|(dimension, _)| dimension == "backend")
        {
            field.push_str(&as_written);
        }
        if let Some(part) = self
            .inferred
            .iter_mut()
            .find(|part| part.dimension == "backend")
        {
            part.value.clone_from(&name);
            part.rule.push_str(&as_written);
        }
        let note =
            format!("the engine written `{written}` is the backend `{name}` (one name per engine)");
        (Some(name), Some(note))
    }

    /// A folder that names another engine, or a path another model, than the file states: the file's value is
    /// kept, and the disagreement is a `path_disagrees` warning naming both.
    fn warn_path_disagreements(
        &self,
        record: &RunRecord,
        stated_engine: Option<&Part>,
        warnings: &mut Vec<Warning>,
    ) {
        let file = self.context.path;
        let mut disagreements = Vec::new();
        if let (Some(stated), Some(folder)) = (stated_engine, engine_in_folders(file)) {
            let named = engine::backend_name(&stated.value).to_ascii_lowercase();
            if named != folder && !named.contains(folder) {
                disagreements.push(format!(
                    "the folder names the engine {folder} but the file says {} ({})",
                    stated.value,
                    how_text(&stated.how)
                ));
            }
        }
        if let (Some(stated), Some(prefix)) = (
            &record.key.model,
            config::config_from_path(file).model_prefix,
        ) && config::prefix_names_model(&prefix, &stated.value) == Some(false)
        {
            disagreements.push(format!(
                "the InferenceX name's model prefix `{prefix}` does not name the model the file records, {} \
                 ({})",
                stated.value,
                how_text(&stated.how)
            ));
        }
        for disagreement in disagreements {
            warnings.push(
                Warning::warn(
                    "path_disagrees",
                    format!(
                        "record {}: {disagreement}; the file's value is used",
                        record.record
                    ),
                )
                .run(self.run_id)
                .file(file)
                .at_line(record.line),
            );
        }
    }

    /// One load dimension's text: as the file or `cellscope.toml` states it, else as `in_path` finds it in the
    /// path (inferred, with the rule named `what` in `place`).
    fn take_load<T: ToString>(
        &mut self,
        dimension: &str,
        stated: Option<Part>,
        in_path: fn(&str) -> Option<(T, String)>,
        what: &str,
        warnings: &mut Vec<Warning>,
    ) -> Option<String> {
        let file = self.context.path;
        self.take(
            dimension,
            stated,
            &|| {
                in_path(file).and_then(|(value, place)| {
                    Part::inferred(value.to_string(), format!("{what} in {place}"))
                })
            },
            warnings,
        )
    }

    /// The load: a concurrency (`n`: mapped, stated or a load level in the path), else an offered rate (`rate`:
    /// mapped, stated or in the path), else unstated, which keeps the record with an `info` warning. `None` (with a
    /// warning) when the value given is neither a whole number nor a rate.
    fn load(&mut self, record: &RunRecord, warnings: &mut Vec<Warning>) -> Option<Load> {
        let file = self.context.path;
        // A rate set in cellscope.toml outranks a concurrency the file or its path states; a mapped `n` outranks both.
        let mapped_rate = self.mapping.value("rate", &self.context).is_some()
            && self.mapping.value("n", &self.context).is_none();
        let n_text = if mapped_rate {
            None
        } else {
            self.take_load(
                "n",
                record.key.n.clone(),
                n_in_path,
                "the load level",
                warnings,
            )
        };
        if let Some(text) = n_text {
            let n = text.trim().parse::<u32>().ok();
            if n.is_none() {
                self.bad_load(
                    record,
                    &format!("the concurrency `{text}` is not a whole number"),
                    warnings,
                );
            }
            return n.map(Load::Concurrency);
        }
        let rate_text = self.take_load(
            "rate",
            record.key.rate.clone(),
            rate_in_path,
            "the offered rate",
            warnings,
        );
        let Some(text) = rate_text else {
            warnings.push(
                Warning::info(
                    "load_unstated",
                    format!(
                        "record {}: neither a concurrency nor a request rate is recorded or in the path; it is kept \
                         with its load unstated (set n or rate in cellscope.toml to place it on a curve)",
                        record.record
                    ),
                )
                .run(self.run_id)
                .file(file)
                .at_line(record.line),
            );
            return Some(Load::Unstated);
        };
        let rate = text.parse::<RateRps>().ok();
        if rate.is_none() {
            self.bad_load(
                record,
                &format!("the request rate `{text}` is not a number above zero"),
                warnings,
            );
        }
        rate.map(Load::Rate)
    }

    /// The deployment's configuration: what the path states, overridden by what the file states (each
    /// disagreement a `config_conflict` warning naming both values), overridden by `cellscope.toml`'s
    /// `config.<name>`.
    fn resolve_config(
        &mut self,
        format: &str,
        record: &RunRecord,
        warnings: &mut Vec<Warning>,
    ) -> config::Resolved {
        let file = self.context.path;
        let mut resolved = config::resolve(
            &config::config_from_path(file),
            &[
                config::config_from_fields(format, &record.fields),
                record.settings.clone(),
            ]
            .concat(),
        );
        for (name, mapped) in self.mapping.config(&self.context) {
            match mapped {
                Ok(mapped) => resolved.set(&name, &mapped.value, How::Inferred(mapped.rule)),
                Err(reason) => warnings.push(
                    Warning::warn(
                        "mapping_field_missing",
                        format!("{reason}; {name} is left as the file and its path state it"),
                    )
                    .run(self.run_id)
                    .file(file)
                    .at_line(self.line),
                ),
            }
        }
        for conflict in &resolved.conflicts {
            warnings.push(
                Warning::warn(
                    "config_conflict",
                    format!("record {}: {}", record.record, conflict.message()),
                )
                .run(self.run_id)
                .file(file)
                .at_line(record.line),
            );
        }
        resolved
    }

    /// The parameters a rule found rather than read from a field, as one inferred part named by the rules alone
    /// (not the file each was applied to), so that the audit tallies a deployment's cells under one line.
    fn note_inferred_config(&mut self, resolved: &config::Resolved) {
        let mut inferred = Config::new();
        let mut rules: Vec<&str> = Vec::new();
        for (name, value) in resolved.config.iter() {
            if let Some(rule) = resolved.how.get(name).and_then(config::general_rule) {
                let _ = inferred.insert(name, value);
                if !rules.contains(&rule) {
                    rules.push(rule);
                }
            }
        }
        if !inferred.is_empty() {
            self.inferred.push(InferredPart {
                dimension: "config".to_string(),
                value: inferred.text(),
                rule: rules.join("; "),
            });
        }
    }

    fn bad_load(&self, record: &RunRecord, problem: &str, warnings: &mut Vec<Warning>) {
        warnings.push(
            Warning::warn(
                "bad_load",
                format!(
                    "record {}: {problem}; the record is left out",
                    record.record
                ),
            )
            .run(self.run_id)
            .file(self.context.path)
            .at_line(record.line),
        );
    }

    /// The repetition `cellscope.toml` or the file states, `Ok(None)` when neither does (it is then numbered by
    /// order); `Err` (with a warning) when it is not a whole number.
    fn stated_rep(
        &mut self,
        record: &RunRecord,
        warnings: &mut Vec<Warning>,
    ) -> Result<Option<u32>, ()> {
        if record.key.rep.is_none() && self.mapping.value("rep", &self.context).is_none() {
            return Ok(None);
        }
        let Some(text) = self.take("rep", record.key.rep.clone(), &|| None, warnings) else {
            return Ok(None);
        };
        match text.trim().parse::<u32>() {
            Ok(rep) => Ok(Some(rep)),
            Err(_) => {
                warnings.push(
                    Warning::warn(
                        "bad_rep",
                        format!(
                            "record {}: the repetition `{text}` is not a whole number; the record is left out",
                            record.record
                        ),
                    )
                    .run(self.run_id)
                    .file(self.context.path)
                    .at_line(record.line),
                );
                Err(())
            }
        }
    }
}

/// The engine the file itself states: its reader's (a `backend` field, a server's own report), else the `engine`
/// of its configuration as its content or its own name (an InferenceX result name, a runner) gives it.
fn stated_engine(record: &RunRecord, resolved: &config::Resolved) -> Option<Part> {
    if let Some(stated) = &record.key.backend {
        return Some(stated.clone());
    }
    let engine = resolved.config.get("engine")?;
    let how = resolved.how.get("engine")?;
    Some(Part {
        value: engine.to_string(),
        how: match how {
            How::Read(field) => How::Read(format!("{field} (the configuration's engine)")),
            How::Inferred(rule) => How::Inferred(format!("the engine of {rule}")),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::model_name;

    #[test]
    fn paths_name_engines_and_load_levels() {
        assert_eq!(
            engine_in_path("results/vllm-sweep/run=0.json").as_deref(),
            Some("vllm")
        );
        assert_eq!(engine_in_path("results/a/b.json"), None);
        assert_eq!(engine_in_path("vllm/vs/sglang/x.json"), None);
        assert_eq!(
            n_in_path("a/concurrency_16/profile_export.jsonl").map(|(n, _)| n),
            Some(16)
        );
        assert_eq!(
            n_in_path("artifacts/m-openai-chat-concurrency64/profile_export.jsonl").map(|(n, _)| n),
            Some(64)
        );
        assert_eq!(
            n_in_path("x/SERVE--a=1-BENCH--max_concurrency=8/run=0.json").map(|(n, _)| n),
            Some(8)
        );
        assert_eq!(n_in_path("results/out.json"), None);
        assert_eq!(
            rate_in_path("x/request_rate=2.5/run.json").map(|(rate, _)| rate.to_string()),
            Some("2.5".into())
        );
        assert_eq!(
            rate_in_path("x/sweep-rate_inf/run.json").map(|(rate, _)| rate.to_string()),
            Some("inf".into())
        );
        assert_eq!(rate_in_path("x/rate/run.json"), None);
        assert_eq!(model_name("meta-llama/Llama-3.1-8B/"), "Llama-3.1-8B");
        assert_eq!(model_name("qwen"), "qwen");
    }

    /// A vLLM record of `model` at N = 4 whose file carries `fields`.
    fn record(fields: serde_json::Value) -> RunRecord {
        RunRecord {
            fields,
            key: crate::run::record::KeyParts {
                model: Part::read("Qwen3-8B", "model_id"),
                n: Part::read("4", "max_concurrency"),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn records_differing_only_in_their_configuration_are_two_cells_each_rep_0() {
        let mut warnings = Vec::new();
        let records = vec![
            (
                "x/SERVE--max_num_seqs=4-BENCH--max_concurrency=4/run=0.json".to_string(),
                record(serde_json::json!({})),
            ),
            (
                "x/SERVE--max_num_seqs=8-BENCH--max_concurrency=4/run=0.json".to_string(),
                record(serde_json::json!({})),
            ),
            (
                "x/SERVE--max_num_seqs=8-BENCH--max_concurrency=4/run=1.json".to_string(),
                record(serde_json::json!({})),
            ),
        ];
        let keyed = resolve(
            "vllm-bench",
            &Mapping::default(),
            "r",
            records,
            &mut warnings,
        );
        let keys: Vec<String> = keyed
            .iter()
            .map(|keyed| keyed.coordinates.to_string())
            .collect();
        assert_eq!(
            keys,
            [
                "vllm-bench/sweep/unknown/Qwen3-8B/unknown/max_num_seqs=4/n=4/rep=0",
                "vllm-bench/sweep/unknown/Qwen3-8B/unknown/max_num_seqs=8/n=4/rep=0",
                "vllm-bench/sweep/unknown/Qwen3-8B/unknown/max_num_seqs=8/n=4/rep=1",
            ]
        );
        assert!(
            warnings
                .iter()
                .all(|warning| warning.kind != "duplicate_cell"),
            "{warnings:#?}"
        );
        assert!(
            keyed[0]
                .inferred
                .iter()
                .any(|part| part.dimension == "config"
                    && part.value == "max_num_seqs=4"
                    && part.rule == "a `vllm bench sweep` serve parameter")
        );
    }

    #[test]
    fn records_differing_in_a_recorded_setting_are_kept_apart_by_it_and_alike_ones_are_reps() {
        let recorded = |value: &str| {
            let mut record = record(serde_json::json!({}));
            record
                .recorded
                .insert("gpu_memory_utilization".into(), value.into());
            record
        };
        let records = ["0.85", "0.95", "0.9", "0.9"]
            .into_iter()
            .enumerate()
            .map(|(index, value)| {
                let mut record = recorded(value);
                record.record = index as u32;
                ("bench.jsonl".to_string(), record)
            })
            .collect();
        let mut warnings = Vec::new();
        let keyed = resolve(
            "vllm-bench",
            &Mapping::default(),
            "r",
            records,
            &mut warnings,
        );
        let keys: Vec<(String, u32)> = keyed
            .iter()
            .map(|keyed| (keyed.coordinates.config.text(), keyed.coordinates.rep))
            .collect();
        assert_eq!(
            keys,
            [
                ("gpu_memory_utilization=0.85".to_string(), 0),
                ("gpu_memory_utilization=0.95".to_string(), 0),
                ("gpu_memory_utilization=0.9".to_string(), 0),
                ("gpu_memory_utilization=0.9".to_string(), 1),
            ]
        );
        let differ: Vec<_> = warnings
            .iter()
            .filter(|warning| warning.kind == "records_differ")
            .collect();
        assert_eq!(differ.len(), 1, "{warnings:#?}");
        assert!(
            differ[0]
                .message
                .contains("`gpu_memory_utilization` (`0.85`, `0.95`, `0.9`, `0.9`)"),
            "{}",
            differ[0].message
        );
        // A setting that is the load or the client's bookkeeping never splits records.
        let mut warnings = Vec::new();
        let alike = (0..2)
            .map(|index| {
                let mut record = record(serde_json::json!({}));
                record.record = index;
                record.recorded.insert("seed".into(), index.to_string());
                ("bench.jsonl".to_string(), record)
            })
            .collect();
        let keyed = resolve("vllm-bench", &Mapping::default(), "r", alike, &mut warnings);
        assert_eq!(keyed[1].coordinates.rep, 1);
        assert!(warnings.is_empty(), "{warnings:#?}");
    }

    #[test]
    fn a_file_contradicting_its_path_wins_with_a_warning_naming_file_and_both_values() {
        let mut warnings = Vec::new();
        let file = "runs/llama-tp4-h100/result.json".to_string();
        let records = vec![(
            file.clone(),
            record(serde_json::json!({"tensor_parallel_size": 8})),
        )];
        let keyed = resolve(
            "vllm-bench",
            &Mapping::default(),
            "r",
            records,
            &mut warnings,
        );
        assert_eq!(keyed[0].coordinates.config.text(), "accelerator=h100,tp=8");
        let conflict: Vec<_> = warnings
            .iter()
            .filter(|warning| warning.kind == "config_conflict")
            .collect();
        assert_eq!(conflict.len(), 1, "{warnings:#?}");
        assert_eq!(conflict[0].file.as_deref(), Some(file.as_str()));
        let message = &conflict[0].message;
        assert!(
            message.contains("tp=4") && message.contains("tp=8"),
            "{message}"
        );
    }

    #[test]
    fn cellscope_toml_states_a_configuration_the_files_do_not() {
        let mut warnings = Vec::new();
        let mapping = Mapping::parse(
            r#"
[[map]]
glob = "runs/**"
config.tp = 4
config.precision = "FP8"

[[map]]
glob = "runs/big/**"
config = { tp = 8, max_num_seqs = "{limits.seqs}" }

[[map]]
glob = "other/**"
config.max_concurrency = 2
"#,
            "cellscope.toml",
            &mut warnings,
        );
        assert_eq!(warnings.len(), 1, "{warnings:#?}");
        assert!(
            warnings[0].message.contains("config.max_concurrency"),
            "{}",
            warnings[0].message
        );
        let records = vec![
            (
                "runs/small/a.json".to_string(),
                record(serde_json::json!({})),
            ),
            (
                "runs/big/a.json".to_string(),
                record(serde_json::json!({"limits": {"seqs": 64}})),
            ),
            ("runs/big/b.json".to_string(), record(serde_json::json!({}))),
        ];
        let mut warnings = Vec::new();
        let keyed = resolve("vllm-bench", &mapping, "r", records, &mut warnings);
        let configs: Vec<String> = keyed
            .iter()
            .map(|keyed| keyed.coordinates.config.text())
            .collect();
        assert_eq!(
            configs,
            [
                "precision=fp8,tp=4",
                "max_num_seqs=64,precision=fp8,tp=8",
                "precision=fp8,tp=8"
            ]
        );
        assert!(keyed.iter().all(|keyed| keyed.coordinates.rep == 0));
        let missing: Vec<_> = warnings
            .iter()
            .filter(|warning| warning.kind == "mapping_field_missing")
            .collect();
        assert_eq!(missing.len(), 1, "{warnings:#?}");
        assert_eq!(missing[0].file.as_deref(), Some("runs/big/b.json"));
        let explained = keyed[0].config.explain_lines();
        assert!(
            explained[1].contains("cellscope.toml [[map]] #1"),
            "{explained:?}"
        );
    }
}
