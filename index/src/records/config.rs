//! The deployment configuration a result states: in its path (a `vllm bench sweep` combination directory, an
//! InferenceX result name, tokens such as `tp4`, `fp8`, `h100` in any component) and in its content (SGLang's
//! `server_info`, parameters a sweep or `--metadata` wrote into a vLLM result). Pure functions over a
//! root-relative path and a record's JSON; the content wins over the path, and a disagreement is a [`Conflict`]
//! the caller reports.

use crate::run::record::{How, Setting};
use cellscope_model::accelerator;
use cellscope_model::config::{self, Config};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// What a path says about its results: the configuration, the load (kept apart: it is not configuration, the
/// load reader uses it) and the workload an InferenceX name states (`1k1k`: input and output length in K tokens).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PathSettings {
    /// Configuration parameters, at most one per name (a deeper component wins over its parents).
    pub config: Vec<Setting>,
    /// `max_concurrency`, `request_rate` found in the path.
    pub load: Vec<Setting>,
    /// The workload an InferenceX result name states.
    pub workload: Option<Setting>,
    /// The model prefix an InferenceX result name opens with (`dsr1`, `gptoss`), as written.
    pub model_prefix: Option<String>,
}

/// A parameter whose value in the file differs from the one its path states; the file's value is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Conflict {
    /// What the path says.
    pub path: Setting,
    /// What the file says (the value kept).
    pub content: Setting,
}

impl Conflict {
    /// The warning text: both values and where each was found.
    pub(crate) fn message(&self) -> String {
        format!(
            "the path says {}={} ({}) but the file says {}={} ({}); the file's value is used",
            self.path.name,
            self.path.value,
            how_text(&self.path.how),
            self.content.name,
            self.content.value,
            how_text(&self.content.how),
        )
    }
}

/// A record's configuration: the parameters, how each was found, and the path's values the file contradicts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The configuration that keys the record's cell.
    pub config: Config,
    /// Parameter name → where its value was found, for `--explain`.
    pub how: BTreeMap<String, How>,
    /// Each parameter whose path and file values differ.
    pub conflicts: Vec<Conflict>,
}

/// The text `--explain` shows for how a setting was found.
pub(crate) fn how_text(how: &How) -> String {
    match how {
        How::Read(field) => field.clone(),
        How::Inferred(rule) => format!("inferred: {rule}"),
    }
}

/// The rule of an inferred setting without the path component it read ("an InferenceX result name"), so that
/// the cells of many files share it; `None` for a setting read from a field.
pub(crate) fn general_rule(how: &How) -> Option<&str> {
    match how {
        How::Read(_) => None,
        How::Inferred(rule) => Some(
            rule.strip_prefix("path component `")
                .and_then(|rest| rest.split_once("`, "))
                .map_or(rule.as_str(), |(_, general)| general),
        ),
    }
}

/// The configuration of a record whose path gave `path` and whose content gave `content`: the content wins, and
/// every path value it contradicts is a [`Conflict`].
pub(crate) fn resolve(path: &PathSettings, content: &[Setting]) -> Resolved {
    let mut resolved = Resolved::default();
    let from_path = expanded(&path.config);
    for setting in &from_path {
        resolved.take(setting);
    }
    for setting in &expanded(content) {
        if let Some(from_path) = from_path
            .iter()
            .find(|from_path| from_path.name == setting.name && from_path.value != setting.value)
        {
            resolved.conflicts.push(Conflict {
                path: from_path.clone(),
                content: setting.clone(),
            });
        }
        resolved.take(setting);
    }
    resolved
}

/// `settings` with each accelerator string read by the model's table ([`accelerator::parse`]): `4xNVIDIA_L40S` is
/// the accelerator `l40s` and 4 accelerators, `8xH100-SXM-80GB` adds the variant `sxm-80gb`, and a runner's engine
/// (`b200-trt`) is the engine unless the same settings state one. Each part keeps where the string was found.
pub(crate) fn expanded(settings: &[Setting]) -> Vec<Setting> {
    let states = |name: &str| settings.iter().any(|setting| setting.name == name);
    let mut out: Vec<Setting> = Vec::with_capacity(settings.len());
    for setting in settings {
        let parsed = setting
            .name
            .ends_with("accelerator")
            .then(|| accelerator::parse(&setting.value))
            .flatten();
        let Some(parsed) = parsed else {
            out.push(setting.clone());
            continue;
        };
        // A prefixed accelerator (`decode_accelerator`) keeps its prefix on every part.
        let prefix = &setting.name[..setting.name.len() - "accelerator".len()];
        let part = |name: &str, value: &str| Setting {
            name: format!("{prefix}{name}"),
            value: config::normalise_value(name, value),
            how: setting.how.clone(),
        };
        out.push(part("accelerator", &parsed.name));
        if let Some(count) = parsed.count
            && !states(&format!("{prefix}accelerators"))
        {
            out.push(part("accelerators", &count.to_string()));
        }
        if let Some(variant) = &parsed.variant {
            out.push(part("accelerator_variant", variant));
        }
        if let Some(engine) = parsed.engine
            && prefix.is_empty()
            && !states("engine")
        {
            out.push(part("engine", engine));
        }
    }
    out
}

impl Resolved {
    /// Sets one parameter (a later setting replaces an earlier one) and remembers where it was found.
    fn take(&mut self, setting: &Setting) {
        self.set(&setting.name, &setting.value, setting.how.clone());
    }

    /// Sets parameter `name` (any spelling) to `value` over whatever was found before, found as `how` (a
    /// `cellscope.toml` entry); a name that cannot be configuration is left out.
    pub(crate) fn set(&mut self, name: &str, value: &str, how: How) {
        for setting in expanded(&[Setting::new(name, value, how)]) {
            if self.config.insert(&setting.name, &setting.value).is_ok() {
                self.how
                    .insert(config::canonical_name(&setting.name), setting.how);
            }
        }
    }
}

/// The `--explain` lines of a record's configuration: the text form, each parameter with where it was found,
/// and each conflict between path and file.
#[cfg(test)]
pub(crate) fn explain_lines(format: &str, path: &str, record: &Json) -> Vec<String> {
    resolve(&config_from_path(path), &config_from_fields(format, record)).explain_lines()
}

impl Resolved {
    /// The `--explain` lines of this configuration (see [`explain_lines`]).
    pub(crate) fn explain_lines(&self) -> Vec<String> {
        if self.config.is_empty() {
            return vec!["configuration: none stated by the path or the file".to_string()];
        }
        let mut lines = vec![format!("configuration: {}", self.config)];
        for (name, value) in self.config.iter() {
            let how = self.how.get(name).map(how_text).unwrap_or_default();
            lines.push(format!("  {name:<22} = {value:<16} {how}"));
        }
        for conflict in &self.conflicts {
            lines.push(format!("  conflict: {}", conflict.message()));
        }
        lines
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The path

/// What a root-relative path states: each component (directories, then the file name without its extensions) is
/// read by the first rule that knows its shape (a sweep combination, an InferenceX name, then single tokens).
pub(crate) fn config_from_path(path: &str) -> PathSettings {
    let mut settings = PathSettings::default();
    for component in path.split('/').filter(|component| !component.is_empty()) {
        let component = without_extensions(component);
        let found = sweep_combination(component)
            .or_else(|| inferencex_name(component))
            .unwrap_or_else(|| path_tokens(component));
        for setting in found.config {
            settings.config.retain(|known| known.name != setting.name);
            settings.config.push(setting);
        }
        for setting in found.load {
            settings.load.retain(|known| known.name != setting.name);
            settings.load.push(setting);
        }
        settings.workload = found.workload.or(settings.workload.take());
        settings.model_prefix = found.model_prefix.or(settings.model_prefix.take());
    }
    settings
}

/// The model families InferenceX's model prefixes name, as the letters and digits of the model's name contain
/// them (`dsr1` → DeepSeek-R1). A prefix missing here is compared as written.
const MODEL_PREFIXES: [(&str, &str); 6] = [
    ("dsr1", "deepseekr1"),
    ("dsv3", "deepseekv3"),
    ("dsv4", "deepseekv4"),
    ("70b", "70b"),
    ("llama70b", "llama"),
    ("kimik2", "kimik2"),
];

/// Whether the model a file records (`DeepSeek-R1-0528`) can be the one an InferenceX name's prefix names: a known
/// prefix by its family, any other by its pieces (`llama8b`: `llama` and `8b`, each found in `Llama-3.1-8B`);
/// `None` when the prefix is too short to judge.
pub(crate) fn prefix_names_model(prefix: &str, model: &str) -> Option<bool> {
    let letters = |text: &str| -> String {
        text.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let model = letters(model);
    let written = letters(prefix);
    if let Some((_, family)) = MODEL_PREFIXES.iter().find(|(known, _)| *known == written) {
        return Some(model.contains(family));
    }
    if written.len() < 4 {
        return None;
    }
    Some(
        prefix_pieces(&written)
            .iter()
            .all(|piece| model.contains(piece.as_str())),
    )
}

/// A prefix's runs of letters and of digits, a size's unit kept with its number (`llama8b` → `llama`, `8b`).
fn prefix_pieces(written: &str) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    for c in written.chars() {
        let joins = pieces.last().is_some_and(|last| {
            let number = last.starts_with(|d: char| d.is_ascii_digit());
            if number {
                !last.ends_with('b') && (c.is_ascii_digit() || c == 'b')
            } else {
                c.is_ascii_alphabetic()
            }
        });
        match pieces.last_mut() {
            Some(last) if joins => last.push(c),
            _ => pieces.push(c.to_string()),
        }
    }
    pieces
}

/// A file name without its result and compression extensions (`run=0.json.gz` → `run=0`).
fn without_extensions(name: &str) -> &str {
    let mut stem = name;
    while let Some((rest, extension)) = stem.rsplit_once('.') {
        let known = matches!(
            extension.to_ascii_lowercase().as_str(),
            "json" | "jsonl" | "csv" | "parquet" | "gz" | "zst" | "txt"
        );
        if !known || rest.is_empty() {
            break;
        }
        stem = rest;
    }
    stem
}

/// The setting a path component implies, marked as inferred by `rule`.
fn inferred(component: &str, rule: &str, name: &str, value: &str) -> Setting {
    Setting::new(
        name,
        value,
        How::Inferred(format!("path component `{component}`, {rule}")),
    )
}

/// A `vllm bench sweep serve` combination directory: `SERVE--<serve params>-BENCH--<bench params>`, or only
/// one of the halves. Each half is `k=v` pairs joined by `-` (vLLM's `ParameterSweepItem.as_text(sep="-")`,
/// with `/` written as `_`), or a free name when the parameter file named its combinations.
fn sweep_combination(component: &str) -> Option<PathSettings> {
    let (serve, bench) = if let Some(rest) = component.strip_prefix("SERVE--") {
        match rest.split_once("-BENCH--") {
            Some((serve, bench)) => (Some(serve), Some(bench)),
            None => (Some(rest), None),
        }
    } else {
        (None, Some(component.strip_prefix("BENCH--")?))
    };
    let mut settings = PathSettings::default();
    let rule = |half: &str| format!("a `vllm bench sweep` {half} parameter");
    if let Some(serve) = serve {
        for (name, value) in sweep_pairs(serve, "serve") {
            if config::is_configuration(&name) {
                let setting = inferred(component, &rule("serve"), &name, &value);
                settings.config.push(setting);
            }
        }
    }
    if let Some(bench) = bench {
        for (name, value) in sweep_pairs(bench, "bench") {
            let setting = inferred(component, &rule("bench"), &name, &value);
            if is_load(&setting.name) {
                settings.load.push(setting);
            } else if config::is_configuration(&name) {
                settings.config.push(setting);
            }
        }
    }
    Some(settings)
}

/// The load parameters of a bench command.
fn is_load(name: &str) -> bool {
    matches!(name, "max_concurrency" | "request_rate" | "concurrency")
}

/// Whether `name` is a parameter cellscope knows by name (configuration or not).
fn is_known_name(name: &str) -> bool {
    config::param(name).is_some()
        || config::NOT_CONFIGURATION.contains(&config::canonical_name(name).as_str())
}

/// The `k=v` pairs of one half of a sweep combination name. Values may contain `-`, so a segment starts a new
/// pair only when it reads `key=`; a key written with `-` (`max-num-seqs=8`) takes back the trailing segments of
/// the previous value when together they spell a known parameter. A half without `=` is the combination's own
/// name, kept as the parameter `half` (`serve`, `bench`).
fn sweep_pairs(text: &str, half: &str) -> Vec<(String, String)> {
    let segments: Vec<&str> = text.split('-').collect();
    if !segments.iter().any(|segment| starts_pair(segment)) {
        return vec![(half.to_string(), text.to_string())];
    }
    // Segments before the first `key=` begin its key (`max-num-seqs=8`).
    let mut leading: Vec<&str> = Vec::new();
    let mut pairs: Vec<(String, Vec<&str>)> = Vec::new();
    for segment in segments {
        let Some((key, value)) = segment.split_once('=').filter(|_| starts_pair(segment)) else {
            match pairs.last_mut() {
                Some((_, values)) => values.push(segment),
                None => leading.push(segment),
            }
            continue;
        };
        let mut key = key.to_string();
        if pairs.is_empty() && !leading.is_empty() {
            key = format!("{}-{key}", leading.join("-"));
        }
        if let Some((_, values)) = pairs.last_mut() {
            // The longest tail of the previous value that, with this key, names a known parameter.
            for taken in (1..values.len()).rev() {
                let candidate = format!("{}-{key}", values[values.len() - taken..].join("-"));
                if is_known_name(&candidate) {
                    values.truncate(values.len() - taken);
                    key = candidate;
                    break;
                }
            }
        }
        pairs.push((key, vec![value]));
    }
    pairs
        .into_iter()
        .map(|(key, values)| (key, values.join("-")))
        .collect()
}

/// A segment that opens a `key=value` pair: an identifier (letters, digits, `_`, `.`), then `=`.
fn starts_pair(segment: &str) -> bool {
    segment.split_once('=').is_some_and(|(key, _)| {
        key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    })
}

/// An InferenceX (InferenceMAX) result name: `<model>_<isl>k<osl>k_<precision>_<engine>_<parallelism>_conc<C>_
/// <runner>`, the parallelism written `tp4_ep1_dpa_false` (InferenceMAX) or `tp4-pp1-dcp1-pcp1-ep1-dpafalse_
/// disagg-false_spec-none` (InferenceX), the runner being the accelerator with an optional suffix (`b200`,
/// `b200-trt`, `b200-nb_0`); the aggregated copy adds the prefix `agg_`.
fn inferencex_name(component: &str) -> Option<PathSettings> {
    let stem = component.strip_prefix("agg_").unwrap_or(component);
    let tokens: Vec<&str> = stem.split('_').collect();
    let lengths = tokens.iter().position(|token| is_lengths(token))?;
    let conc = tokens
        .iter()
        .position(|token| digits_after(token, "conc").is_some())?;
    if conc < lengths + 3 {
        return None;
    }
    let rule = "an InferenceX result name";
    let mut settings = PathSettings::default();
    let mut add = |name: &str, value: &str| {
        settings.config.push(inferred(component, rule, name, value));
    };
    add("precision", tokens[lengths + 1]);
    add("engine", tokens[lengths + 2]);
    let pieces: Vec<&str> = tokens[lengths + 3..conc]
        .iter()
        .flat_map(|token| token.split('-'))
        .collect();
    for (name, value) in parallelism(&pieces) {
        add(&name, &value);
    }
    if let Some(runner) = tokens.get(conc + 1) {
        // The runner is the accelerator with the engine or host after it (`b200-trt`, `gb200-nv`).
        let accelerator = accelerator::parse(runner).map_or_else(
            || runner.split('-').next().unwrap_or(runner).to_string(),
            |parsed| parsed.name,
        );
        add("accelerator", &accelerator);
    }
    if !settings.config.iter().any(|setting| setting.name == "tp") {
        return None;
    }
    let concurrency = digits_after(tokens[conc], "conc").unwrap_or_default();
    settings
        .load
        .push(inferred(component, rule, "max_concurrency", concurrency));
    settings.workload = Some(inferred(component, rule, "workload", tokens[lengths]));
    settings.model_prefix = Some(tokens[..lengths].join("_")).filter(|prefix| !prefix.is_empty());
    Some(settings)
}

/// `1k1k`, `8k1k`, `1k8k`: input and output lengths in K tokens.
fn is_lengths(token: &str) -> bool {
    let Some(rest) = token.strip_suffix('k') else {
        return false;
    };
    rest.split_once('k').is_some_and(|(input, output)| {
        [input, output]
            .iter()
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The digits after `prefix` when the token is exactly the prefix and a whole number.
fn digits_after<'a>(token: &'a str, prefix: &str) -> Option<&'a str> {
    token
        .strip_prefix(prefix)
        .filter(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
}

/// The parallelism pieces of an InferenceX name: `tp4`, `ep1`, `pp1`, `dcp1`, `pcp1`, `dpa` `false` or
/// `dpafalse`, `disagg` `false`, `spec` `none`.
fn parallelism(pieces: &[&str]) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut index = 0;
    while index < pieces.len() {
        let piece = pieces[index].to_ascii_lowercase();
        let next = pieces.get(index + 1).copied();
        let sized = ["tp", "ep", "pp", "dcp", "pcp"]
            .into_iter()
            .find_map(|prefix| Some((prefix, digits_after(&piece, prefix)?.to_string())));
        if let Some((prefix, size)) = sized {
            found.push((prefix.to_string(), size));
        } else if let Some(flag) = piece.strip_prefix("dpa").filter(|flag| !flag.is_empty()) {
            found.push(("dp_attention".to_string(), flag.to_string()));
        } else if let ("dpa" | "disagg" | "spec", Some(value)) = (piece.as_str(), next) {
            let name = match piece.as_str() {
                "dpa" => "dp_attention",
                "spec" => "spec_decoding",
                other => other,
            };
            found.push((name.to_string(), value.to_string()));
            index += 1;
        }
        index += 1;
    }
    found
}

/// Precision words a path may carry.
const PRECISIONS: &[&str] = &[
    "fp8", "fp4", "nvfp4", "mxfp4", "bf16", "fp16", "fp32", "int8", "int4", "w8a8", "w4a16",
    "w4a8", "awq", "gptq",
];

/// Single tokens of a component split on `-`, `_`, `.` and `=`: `tp4`, `tp=4`, `tp-4` (also dp, ep, pp), a
/// precision word, an accelerator name (`tpu v5e` too), an accelerator count (`8gpu`, `8xh100`, `h100_x8`), and
/// a whole component `name=value` for a known parameter.
fn path_tokens(component: &str) -> PathSettings {
    let mut settings = PathSettings::default();
    if let Some((name, value)) = component.split_once('=')
        && config::param(name).is_some()
        && starts_pair(component)
    {
        let setting = inferred(component, "a `name=value` directory", name, value);
        settings.config.push(setting);
        return settings;
    }
    let tokens: Vec<String> = component
        .split(['-', '_', '.', '='])
        .filter(|token| !token.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let mut found: Vec<(&str, String)> = Vec::new();
    let mut index = 0;
    while index < tokens.len() {
        let token = tokens[index].as_str();
        let next = tokens.get(index + 1).map(String::as_str);
        index += 1;
        if let Some((name, size)) = parallel_token(token, next) {
            index += usize::from(digits_after(token, name).is_none());
            found.push((name, size));
        } else if PRECISIONS.contains(&token) {
            found.push(("precision", token.to_string()));
        } else if let Some(tpu) = tpu_token(token, next) {
            index += usize::from(token == "tpu");
            found.push(("accelerator", tpu));
            index = board_after(&tokens, index, &mut found);
        } else if let Some((count, accelerator)) = count_token(token, next) {
            found.push(("accelerators", count));
            if let Some(accelerator) = accelerator {
                found.push(("accelerator", accelerator));
                index = board_after(&tokens, index, &mut found);
            }
        } else if let Some(name) = accelerator::token_name(token) {
            found.push(("accelerator", name));
            if let Some(count) = next.and_then(|next| digits_after(next, "x")) {
                found.push(("accelerators", count.to_string()));
                index += 1;
            }
            index = board_after(&tokens, index, &mut found);
        }
    }
    for (name, value) in found {
        settings.config.retain(|known| known.name != name);
        let setting = inferred(component, "a token of the path", name, &value);
        settings.config.push(setting);
    }
    settings
}

/// `tp4`, or `tp` followed by a token of digits (`tp-4`, `tp=4`), for tp, dp, ep and pp.
fn parallel_token(token: &str, next: Option<&str>) -> Option<(&'static str, String)> {
    ["tp", "dp", "ep", "pp"].into_iter().find_map(|name| {
        if let Some(size) = digits_after(token, name) {
            return Some((name, size.to_string()));
        }
        let size = next.filter(|next| !next.is_empty() && next.bytes().all(|b| b.is_ascii_digit()));
        (token == name).then_some((name, size?.to_string()))
    })
}

/// A TPU: `tpu` then a generation, `tpuv5e`, or a generation alone (`v5e`), as `tpu-v5e`.
fn tpu_token(token: &str, next: Option<&str>) -> Option<String> {
    match token {
        "tpu" => next
            .and_then(accelerator::token_name)
            .filter(|name| name.starts_with("tpu-")),
        _ => accelerator::token_name(token).filter(|name| name.starts_with("tpu-")),
    }
}

/// An accelerator count: `8gpu`, `8gpus`, `8xh100` (with the accelerator), or `8x` or `4xnvidia` before an
/// accelerator name.
fn count_token(token: &str, next: Option<&str>) -> Option<(String, Option<String>)> {
    let digits = token.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (count, rest) = token.split_at(digits);
    let before_a_name = || next.and_then(accelerator::token_name).is_some();
    match rest {
        "gpu" | "gpus" => Some((count.to_string(), None)),
        "x" | "xnvidia" | "xamd" if before_a_name() => Some((count.to_string(), None)),
        _ => {
            let name = accelerator::token_name(rest.strip_prefix('x')?)?;
            Some((count.to_string(), Some(name)))
        }
    }
}

/// The board variant written after an accelerator (`h100-sxm-80gb`: `sxm-80gb`) from `tokens[index]` on, as one
/// `accelerator_variant`; the index of the first token after it.
fn board_after(tokens: &[String], index: usize, found: &mut Vec<(&str, String)>) -> usize {
    let end = tokens[index..]
        .iter()
        .position(|token| !accelerator::is_variant_token(token))
        .map_or(tokens.len(), |offset| index + offset);
    if end > index {
        found.push(("accelerator_variant", tokens[index..end].join("-")));
    }
    end
}

// ---------------------------------------------------------------------------------------------------------------
// The content

/// The server fields SGLang's `/get_server_info` reports that are configuration, in the order read (the first
/// of two spellings of one parameter wins: `quantization` before `dtype`).
const SGLANG_SERVER_FIELDS: &[&str] = &[
    "tp_size",
    "dp_size",
    "ep_size",
    "pp_size",
    "enable_dp_attention",
    "quantization",
    "dtype",
    "kv_cache_dtype",
    "version",
    "max_running_requests",
    "context_length",
];

/// What a record of format `format` (a `RunFormat` name) states about its deployment: SGLang's
/// `server_info` (for a prefill/decode deployment behind the router, each side's first server, prefixed
/// `prefill_`/`decode_`, and the number of servers on each side), well-known parameters at the top of a vLLM or
/// SGLang result (a sweep writes its serve parameters there, `--metadata` its pairs), and GuideLLM's backend
/// object. AIPerf, GenAI-Perf and LLMPerf record nothing about the server.
pub(crate) fn config_from_fields(format: &str, record: &Json) -> Vec<Setting> {
    let mut settings = Vec::new();
    match format {
        "sglang-bench" => {
            if let Some(info) = record.get("server_info") {
                server_info(info, &mut settings);
            }
            top_level(record, "", &mut settings);
        }
        "vllm-bench" => {
            top_level(record, "", &mut settings);
            vllm_metadata(record, &mut settings);
        }
        "guidellm" => {
            if let Some(backend) = record.pointer("/config/backend") {
                top_level(backend, "config.backend.", &mut settings);
            }
        }
        _ => {}
    }
    settings
}

/// The text fields vLLM writes into a result itself (its own, not `--metadata`'s), in every version.
const VLLM_TEXT_FIELDS: &[&str] = &[
    "date",
    "endpoint_type",
    "backend",
    "label",
    "model_id",
    "tokenizer_id",
    "tokenizer_mode",
    "request_rate",
    "ramp_up_strategy",
    "version",
    "error",
    "error_type",
];

/// The text fields that name the workload, which the result's workload reads rather than its configuration.
const WORKLOAD_FIELDS: &[&str] = &[
    "workload",
    "dataset",
    "dataset_name",
    "dataset_path",
    "input_len",
    "output_len",
];

/// The labels `vllm bench serve --metadata k=v` wrote as top-level text fields (`deployment`, `gateway`,
/// `variant`): every text field vLLM does not write itself and that names neither the workload nor a well-known
/// parameter (those [`top_level`] reads). Each is a parameter of the deployment, so records that differ in one are
/// different configurations, never repetitions.
fn vllm_metadata(record: &Json, settings: &mut Vec<Setting>) {
    let Some(object) = record.as_object() else {
        return;
    };
    for (key, value) in object {
        let Some(text) = value.as_str() else {
            continue;
        };
        if VLLM_TEXT_FIELDS.contains(&key.as_str())
            || WORKLOAD_FIELDS.contains(&config::canonical_name(key).as_str())
            || config::param(key).is_some()
            || !config::is_configuration(key)
            || !is_label(text)
        {
            continue;
        }
        settings.push(Setting::new(
            key,
            text,
            How::Read(format!("field `{key}` (--metadata)")),
        ));
    }
}

/// Whether a text can be a label: not empty, one line, at most [`LABEL_MAX_BYTES`] (a note or a prompt kept in a
/// result is not a deployment's name).
fn is_label(text: &str) -> bool {
    !text.trim().is_empty() && text.len() <= LABEL_MAX_BYTES && !text.chars().any(char::is_control)
}

/// The longest text read as a `--metadata` label.
const LABEL_MAX_BYTES: usize = 128;

/// SGLang's `server_info`: one server's fields, or the router's `prefill`/`decode` lists.
fn server_info(info: &Json, settings: &mut Vec<Setting>) {
    let sides: Vec<(&str, &Vec<Json>)> = ["prefill", "decode"]
        .into_iter()
        .filter_map(|side| Some((side, info.get(side)?.as_array()?)))
        .collect();
    if sides.is_empty() {
        server_fields(info, "server_info.", "", settings);
        return;
    }
    for (side, servers) in sides {
        let how = How::Read(format!("the length of `server_info.{side}`"));
        settings.push(Setting::new(
            &format!("{side}_servers"),
            &servers.len().to_string(),
            how,
        ));
        if let Some(first) = servers.first() {
            let field = format!("server_info.{side}[0].");
            server_fields(first, &field, &format!("{side}_"), settings);
        }
    }
}

/// The configuration fields of one SGLang server's info, named with `prefix` (`decode_` for a decode server).
fn server_fields(info: &Json, field: &str, prefix: &str, settings: &mut Vec<Setting>) {
    for key in SGLANG_SERVER_FIELDS {
        let Some(value) = info.get(*key).and_then(value_text) else {
            continue;
        };
        // `dtype: auto` says only that the model's own dtype was kept.
        if *key == "dtype" && value == "auto" {
            continue;
        }
        let name = format!("{prefix}{}", config::canonical_name(key));
        if settings.iter().any(|known| known.name == name) {
            continue;
        }
        let how = How::Read(format!("field `{field}{key}`"));
        settings.push(Setting {
            name,
            value: config::normalise_value(key, &value),
            how,
        });
    }
}

/// The well-known parameters among an object's own fields (`field` prefixes the names in the source text).
fn top_level(object: &Json, field: &str, settings: &mut Vec<Setting>) {
    let Some(object) = object.as_object() else {
        return;
    };
    for (key, value) in object {
        if config::param(key).is_none()
            || settings
                .iter()
                .any(|known| config::canonical_name(key) == known.name)
        {
            continue;
        }
        if let Some(value) = value_text(value) {
            settings.push(Setting::new(
                key,
                &value,
                How::Read(format!("field `{field}{key}`")),
            ));
        }
    }
}

/// A JSON value as configuration text: strings as they are, numbers and booleans as JSON writes them, lists and
/// objects as compact JSON; `None` for null.
fn value_text(value: &Json) -> Option<String> {
    match value {
        Json::Null => None,
        Json::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod prefix_tests {
    use super::*;

    #[test]
    fn model_prefixes_are_judged_by_family_or_pieces() {
        assert_eq!(prefix_pieces("llama8b"), ["llama", "8b"]);
        assert_eq!(prefix_pieces("qwen35"), ["qwen", "35"]);
        for (prefix, model, names) in [
            ("dsr1", "DeepSeek-R1-0528", true),
            ("llama8b", "Llama-3.1-8B-Instruct", true),
            ("70b", "Llama-3.3-70B-Instruct", true),
            ("qwen3.5", "Qwen3.5-397B-A17B", true),
            ("gptoss", "gpt-oss-120b", true),
            ("gptoss", "DeepSeek-R1-0528", false),
            ("dsr1", "gpt-oss-120b", false),
            ("llama8b", "Llama-3.3-70B-Instruct", false),
        ] {
            assert_eq!(
                prefix_names_model(prefix, model),
                Some(names),
                "{prefix} {model}"
            );
        }
        assert_eq!(prefix_names_model("m", "x"), None);
    }
}
