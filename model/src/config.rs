//! A deployment's configuration: everything that was served differently between two measurements (engine and
//! its version, tensor/data/expert/pipeline parallelism, precision, accelerator type and count, batch limits, and
//! any other parameter a sweep varies), as canonical parameter names and normalised values.
//!
//! Two results of one model at TP4 and TP8 are different deployments, never repetitions of one cell, so the
//! configuration is part of what makes a cell. The load (concurrency, request rate) and the bench client's
//! bookkeeping are not configuration: [`NOT_CONFIGURATION`] lists them.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Mutex, PoisonError};

/// One well-known configuration parameter: its canonical name and the other spellings tools use for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigParam {
    /// The canonical name (`tp`), used in the text form and in JSON.
    pub name: &'static str,
    /// A readable label (`tensor parallel`).
    pub label: &'static str,
    /// Other spellings, already canonicalised (lowercase, `_` for `-`).
    pub aliases: &'static [&'static str],
    /// Values are whole numbers (parallel sizes, counts, token limits).
    pub numeric: bool,
}

/// Every well-known parameter. A name found in no entry is kept as it is written (canonicalised).
pub static PARAMS: &[ConfigParam] = &[
    ConfigParam {
        name: "engine",
        label: "engine",
        aliases: &["framework"],
        numeric: false,
    },
    ConfigParam {
        name: "engine_version",
        label: "engine version",
        aliases: &["version"],
        numeric: false,
    },
    ConfigParam {
        name: "tp",
        label: "tensor parallel",
        aliases: &["tensor_parallel_size", "tp_size"],
        numeric: true,
    },
    ConfigParam {
        name: "dp",
        label: "data parallel",
        aliases: &["data_parallel_size", "dp_size"],
        numeric: true,
    },
    ConfigParam {
        name: "ep",
        label: "expert parallel",
        aliases: &["expert_parallel_size", "ep_size"],
        numeric: true,
    },
    ConfigParam {
        name: "pp",
        label: "pipeline parallel",
        aliases: &["pipeline_parallel_size", "pp_size"],
        numeric: true,
    },
    ConfigParam {
        name: "dp_attention",
        label: "DP attention",
        aliases: &["enable_dp_attention", "dpa"],
        numeric: false,
    },
    // The KV cache's dtype is its own parameter: an fp8 KV cache on a bf16 model is not an fp8 model.
    ConfigParam {
        name: "precision",
        label: "precision",
        aliases: &["quantization", "dtype"],
        numeric: false,
    },
    ConfigParam {
        name: "kv_cache_dtype",
        label: "KV cache dtype",
        aliases: &[],
        numeric: false,
    },
    ConfigParam {
        name: "accelerator",
        label: "accelerator",
        aliases: &["gpu", "hw", "device"],
        numeric: false,
    },
    // The board (form factor, memory), apart from the accelerator so H100s of any board stay comparable.
    ConfigParam {
        name: "accelerator_variant",
        label: "accelerator variant",
        aliases: &[],
        numeric: false,
    },
    ConfigParam {
        name: "accelerators",
        label: "accelerator count",
        aliases: &["gpu_count", "num_gpus", "gpus"],
        numeric: true,
    },
    ConfigParam {
        name: "max_num_seqs",
        label: "max running sequences",
        aliases: &["max_running_requests"],
        numeric: true,
    },
    ConfigParam {
        name: "max_num_batched_tokens",
        label: "max batched tokens",
        aliases: &[],
        numeric: true,
    },
    ConfigParam {
        name: "max_model_len",
        label: "max model length",
        aliases: &["context_length"],
        numeric: true,
    },
];

/// Bench parameters that are never configuration: the load, sizes that scale with it, the workload sent (a
/// dimension of its own), and the client's bookkeeping (where it writes, which server it calls, how it seeds
/// its sampling).
pub static NOT_CONFIGURATION: &[&str] = &[
    "max_concurrency",
    "request_rate",
    "concurrency",
    "num_prompts",
    "num_requests",
    "burstiness",
    "seed",
    "result_dir",
    "result_filename",
    "save_result",
    "save_detailed",
    "append_result",
    "output_file",
    "output_dir",
    "port",
    "host",
    "base_url",
    "endpoint",
    "dataset_path",
    "dataset_name",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "random_prefix_len",
    "sharegpt_output_len",
    "input_len",
    "output_len",
    "run_number",
    "metadata",
    "label",
    "percentile_metrics",
    "metric_percentiles",
    "disable_tqdm",
    "profile",
];

/// The well-known parameter called `name` or one of its aliases (after [`canonical_name`]).
pub fn param(name: &str) -> Option<&'static ConfigParam> {
    let lowered = spelling(name);
    PARAMS
        .iter()
        .find(|param| param.name == lowered || param.aliases.contains(&lowered.as_str()))
}

/// Lowercase, trimmed, `-` and spaces as `_`: how the tools' spellings of one name meet.
fn spelling(name: &str) -> String {
    name.trim()
        .chars()
        .map(|c| match c {
            '-' | ' ' => '_',
            other => other.to_ascii_lowercase(),
        })
        .collect()
}

/// The canonical name of a parameter: the well-known name its alias stands for, else the name lowercased with
/// `-` read as `_`.
pub fn canonical_name(name: &str) -> String {
    match param(name) {
        Some(param) => param.name.to_string(),
        None => spelling(name),
    }
}

/// Whether a parameter of this name can be configuration (it is not the load or the client's bookkeeping).
pub fn is_configuration(name: &str) -> bool {
    let name = canonical_name(name);
    !name.is_empty() && !NOT_CONFIGURATION.contains(&name.as_str())
}

/// A value as the configuration keeps it: trimmed; numbers as written without leading zeros; `true`/`false` in
/// lowercase; precisions, dtypes and accelerators in lowercase (`FP8` and `fp8` are one precision), a precision's
/// long dtype name as its short one (`bfloat16` is `bf16`), and an engine by its canonical name ([`crate::engine`]).
pub fn normalise_value(name: &str, value: &str) -> String {
    let value = value.trim();
    if value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false") {
        return value.to_ascii_lowercase();
    }
    if let Some(number) = without_leading_zeros(value) {
        return number;
    }
    match canonical_name(name).as_str() {
        "precision" => short_dtype(&value.to_ascii_lowercase()),
        "kv_cache_dtype" | "accelerator" | "accelerator_variant" => value.to_ascii_lowercase(),
        "engine" => crate::engine::canonical(value)
            .map_or_else(|| value.to_ascii_lowercase(), str::to_string),
        _ => value.to_string(),
    }
}

/// The short name of a dtype the tools also spell out (PyTorch's `bfloat16`, `float16`, `half`, `float32`).
fn short_dtype(lowered: &str) -> String {
    match lowered {
        "bfloat16" => "bf16",
        "float16" | "half" => "fp16",
        "float32" | "float" => "fp32",
        other => other,
    }
    .to_string()
}

/// A decimal number (`-`, digits, an optional fraction) without the leading zeros of its whole part; `None` for
/// any other text.
fn without_leading_zeros(value: &str) -> Option<String> {
    let (sign, unsigned) = match value.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", value),
    };
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (unsigned, None),
    };
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || fraction.is_some_and(|fraction| !digits(fraction)) {
        return None;
    }
    let trimmed = whole.trim_start_matches('0');
    let whole = if trimmed.is_empty() { "0" } else { trimmed };
    Some(match fraction {
        Some(fraction) => format!("{sign}{whole}.{fraction}"),
        None => format!("{sign}{whole}"),
    })
}

/// A parameter's canonical name as a dimension holds it ([`crate::Dimension::Param`]): a `&'static str`, so a
/// dimension stays `Copy`. A well-known parameter's name is the table's own; any other name found in the data
/// is interned once, and only [`INTERNED_MAX`] names ever are, so the names a request makes up cannot grow the set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamName(&'static str);

/// The most names [`ParamName::intern`] keeps beyond the well-known ones (a data root has a few dozen at most).
pub const INTERNED_MAX: usize = 1024;

/// The longest name that can be a dimension.
const NAME_MAX_BYTES: usize = 64;

/// The names interned so far, beyond the well-known ones.
static INTERNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

impl ParamName {
    /// The canonical name.
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// The parameter named `name` (any spelling) when it is well known or already interned; `None` otherwise, so
    /// a link or a query naming no parameter of the data is refused as an unknown name.
    pub fn known(name: &str) -> Option<ParamName> {
        if let Some(param) = param(name) {
            return Some(ParamName(param.name));
        }
        let name = canonical_name(name);
        let interned = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
        interned.get(name.as_str()).copied().map(ParamName)
    }

    /// The parameter named `name`, interned if new: for names found in the data. `None` for a name that cannot be
    /// a dimension (not configuration, too long, characters other than lowercase letters, digits, `_` and `.`,
    /// not starting with a letter) or when [`INTERNED_MAX`] names are kept already.
    pub fn intern(name: &str) -> Option<ParamName> {
        if let Some(known) = ParamName::known(name) {
            return Some(known);
        }
        let name = canonical_name(name);
        let shaped = name.len() <= NAME_MAX_BYTES
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.');
        if !shaped || !is_configuration(&name) {
            return None;
        }
        let mut interned = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(kept) = interned.get(name.as_str()).copied() {
            return Some(ParamName(kept));
        }
        if interned.len() >= INTERNED_MAX {
            return None;
        }
        // Leaked once per distinct name, bounded by `INTERNED_MAX`: the price of a `Copy` dimension.
        let leaked: &'static str = Box::leak(name.into_boxed_str());
        interned.insert(leaked);
        Some(ParamName(leaked))
    }

    /// The readable label of a well-known parameter (`tensor parallel`), else the name.
    pub fn label(self) -> &'static str {
        PARAMS
            .iter()
            .find(|param| param.name == self.0)
            .map_or(self.0, |param| param.label)
    }

    /// Whether the parameter's values are whole numbers by definition (parallel sizes, counts, token limits).
    pub fn is_numeric(self) -> bool {
        PARAMS
            .iter()
            .any(|param| param.name == self.0 && param.numeric)
    }
}

impl fmt::Display for ParamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// The text a cell whose configuration does not state a parameter has for that parameter's dimension.
pub const UNSTATED: &str = "unstated";

/// A deployment's configuration: canonical parameter name → normalised value, in name order.
///
/// The text form is `name=value` pairs joined by `,` (`precision=fp8,tp=4`), with `%`, `,`, `=` and `/`
/// percent-escaped in names and values, so it can sit inside a cell key's `/`-separated text. In JSON it is an
/// object of strings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Config {
    values: BTreeMap<String, String>,
}

/// Why a parameter or a text cannot be part of a configuration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The parameter is the load or the bench client's bookkeeping.
    #[error("`{name}` is not configuration (it is the load or the bench client's own setting)")]
    NotConfiguration {
        /// The name as given.
        name: String,
    },
    /// A pair of the text form has no `=`, an empty name or a bad escape.
    #[error("`{text}` is not a configuration (expected name=value pairs separated by `,`)")]
    BadText {
        /// The text that was read.
        text: String,
    },
}

impl Config {
    /// The empty configuration (nothing known about how the deployment was served).
    pub fn new() -> Config {
        Config::default()
    }

    /// Whether nothing is known.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// How many parameters are known.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// The value of a parameter, by any of its spellings.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(&canonical_name(name)).map(String::as_str)
    }

    /// Sets a parameter (name canonicalised, value normalised) and gives back the value it replaces. A name of
    /// [`NOT_CONFIGURATION`] is refused.
    pub fn insert(&mut self, name: &str, value: &str) -> Result<Option<String>, ConfigError> {
        if !is_configuration(name) {
            return Err(ConfigError::NotConfiguration {
                name: name.to_string(),
            });
        }
        let value = normalise_value(name, value);
        Ok(self.values.insert(canonical_name(name), value))
    }

    /// The parameters in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }

    /// How many accelerators serve the deployment: `accelerators` where stated, else tensor × pipeline × data
    /// parallel sizes (a size not stated is the engines' default 1; data parallelism does not add accelerators
    /// under DP attention, which runs inside the tensor-parallel group); `None` when none of them is stated.
    pub fn accelerator_count(&self) -> Option<u32> {
        let size = |name: &str| self.get(name).and_then(|value| value.parse::<u32>().ok());
        if let Some(count) = size("accelerators") {
            return (count > 0).then_some(count);
        }
        let dp = if self.get("dp_attention") == Some("true") {
            None
        } else {
            size("dp")
        };
        let sizes = [size("tp"), size("pp"), dp];
        if sizes.iter().all(Option::is_none) {
            return None;
        }
        let count = sizes
            .into_iter()
            .map(|size| size.unwrap_or(1))
            .try_fold(1u32, u32::checked_mul)?;
        (count > 0).then_some(count)
    }

    /// The text form (`precision=fp8,tp=4`; empty for the empty configuration).
    pub fn text(&self) -> String {
        self.to_string()
    }
}

/// The characters a configuration's text form percent-escapes: its separators, `/` (so it can sit in a key) and `%`.
const CONFIG_SPECIAL: [char; 4] = ['%', ',', '=', '/'];

fn write_escaped(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    crate::escape::write_escaped(f, text, &CONFIG_SPECIAL)
}

fn read_escaped(text: &str) -> Option<String> {
    crate::escape::read_escaped(text, &CONFIG_SPECIAL)
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, (name, value)) in self.values.iter().enumerate() {
            if position > 0 {
                f.write_str(",")?;
            }
            write_escaped(f, name)?;
            f.write_str("=")?;
            write_escaped(f, value)?;
        }
        Ok(())
    }
}

/// Reads the text form back; names and values are canonicalised as [`Config::insert`] does.
impl std::str::FromStr for Config {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Config, ConfigError> {
        let bad = || ConfigError::BadText {
            text: text.to_string(),
        };
        let mut config = Config::new();
        if text.is_empty() {
            return Ok(config);
        }
        for pair in text.split(',') {
            let (name, value) = pair.split_once('=').ok_or_else(bad)?;
            let name = read_escaped(name).filter(|name| !name.trim().is_empty());
            let (Some(name), Some(value)) = (name, read_escaped(value)) else {
                return Err(bad());
            };
            config.insert(&name, &value)?;
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn accelerator_count_from_the_count_or_the_parallel_sizes() {
        let config = |pairs: &[(&str, &str)]| {
            let mut config = Config::new();
            for (name, value) in pairs {
                config.insert(name, value).unwrap();
            }
            config.accelerator_count()
        };
        assert_eq!(config(&[]), None);
        assert_eq!(config(&[("precision", "fp8")]), None);
        assert_eq!(config(&[("tp", "4")]), Some(4));
        assert_eq!(config(&[("tp", "4"), ("pp", "2"), ("dp", "2")]), Some(16));
        assert_eq!(
            config(&[("tp", "8"), ("dp", "8"), ("dp_attention", "true")]),
            Some(8)
        );
        assert_eq!(config(&[("tp", "8"), ("ep", "8")]), Some(8));
        assert_eq!(config(&[("gpus", "2"), ("tp", "8")]), Some(2));
        assert_eq!(config(&[("tp", "0")]), None);
        assert_eq!(config(&[("tp", "x")]), None);
    }

    #[test]
    fn aliases_meet_at_one_name() {
        for (alias, name) in [
            ("tensor_parallel_size", "tp"),
            ("tp_size", "tp"),
            ("tensor-parallel-size", "tp"),
            ("TP", "tp"),
            ("data_parallel_size", "dp"),
            ("dp_size", "dp"),
            ("expert_parallel_size", "ep"),
            ("ep_size", "ep"),
            ("pipeline_parallel_size", "pp"),
            ("pp_size", "pp"),
            ("enable_dp_attention", "dp_attention"),
            ("dpa", "dp_attention"),
            ("quantization", "precision"),
            ("dtype", "precision"),
            ("kv_cache_dtype", "kv_cache_dtype"),
            ("kv-cache-dtype", "kv_cache_dtype"),
            ("gpu", "accelerator"),
            ("hw", "accelerator"),
            ("device", "accelerator"),
            ("num_gpus", "accelerators"),
            ("version", "engine_version"),
            ("max_running_requests", "max_num_seqs"),
            ("max-num-batched-tokens", "max_num_batched_tokens"),
            ("max_model_len", "max_model_len"),
            ("framework", "engine"),
            ("Block-Size", "block_size"),
            ("compilation_config.level", "compilation_config.level"),
        ] {
            assert_eq!(canonical_name(alias), name, "{alias}");
        }
        assert!(param("kv_cache_dtype").is_some_and(|param| param.name != "precision"));
        assert!(param("tensor_parallel_size").is_some_and(|param| param.numeric));
    }

    #[test]
    fn values_are_normalised() {
        for (name, value, want) in [
            ("tp", "04", "4"),
            ("tp", "0", "0"),
            ("tp", " 8 ", "8"),
            ("gpu_memory_utilization", "0.90", "0.90"),
            ("max_model_len", "-01", "-1"),
            ("dp_attention", "True", "true"),
            ("enable_dp_attention", "FALSE", "false"),
            ("precision", "FP8", "fp8"),
            ("quantization", "NVFP4", "nvfp4"),
            ("dtype", "bfloat16", "bf16"),
            ("dtype", "Float16", "fp16"),
            ("kv_cache_dtype", "FP8_E4M3", "fp8_e4m3"),
            ("gpu", "H100", "h100"),
            ("engine", "SGLang", "sglang"),
            ("served_model_name", "Qwen3-8B", "Qwen3-8B"),
            ("version", "0.5.4.post1", "0.5.4.post1"),
            ("version", "1.2", "1.2"),
        ] {
            assert_eq!(normalise_value(name, value), want, "{name}={value}");
        }
    }

    #[test]
    fn the_load_and_bookkeeping_are_refused() {
        let mut config = Config::new();
        for name in [
            "max_concurrency",
            "max-concurrency",
            "request_rate",
            "num_prompts",
            "seed",
            "port",
        ] {
            assert_eq!(
                config.insert(name, "4"),
                Err(ConfigError::NotConfiguration { name: name.into() })
            );
        }
        assert!(config.is_empty());
        assert!("tp=4,request_rate=2".parse::<Config>().is_err());
    }

    #[test]
    fn insert_get_and_the_text_form() {
        let mut config = Config::new();
        assert_eq!(config.text(), "");
        assert_eq!(config.insert("tensor_parallel_size", "4"), Ok(None));
        assert_eq!(config.insert("quantization", "FP8"), Ok(None));
        assert_eq!(config.insert("tp", "8"), Ok(Some("4".into())));
        assert_eq!(config.get("tp_size"), Some("8"));
        assert_eq!(config.get("precision"), Some("fp8"));
        assert_eq!(config.get("ep"), None);
        assert_eq!(config.len(), 2);
        assert_eq!(config.text(), "precision=fp8,tp=8");
        assert_eq!("precision=fp8,tp=8".parse::<Config>(), Ok(config.clone()));
        assert_eq!(
            "TP=8,quantization=FP8".parse::<Config>(),
            Ok(config.clone())
        );
        assert_eq!(
            serde_json::to_string(&config).unwrap(),
            r#"{"precision":"fp8","tp":"8"}"#
        );
        assert_eq!(
            serde_json::from_str::<Config>(r#"{"precision":"fp8","tp":"8"}"#).unwrap(),
            config
        );
        let mut odd = Config::new();
        odd.insert("model_path", "/models/a,b=c%d").unwrap();
        assert_eq!(odd.text(), "model_path=%2Fmodels%2Fa%2Cb%3Dc%25d");
        assert_eq!(odd.text().parse::<Config>(), Ok(odd));
        for bad in ["tp", "=4", "tp=4,", "tp=%zz", ",tp=4", "tp=4,,pp=2"] {
            assert!(bad.parse::<Config>().is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn the_text_form_reads_back_exactly(
            pairs in proptest::collection::vec(
                (
                    prop_oneof![
                        Just("tp".to_string()),
                        Just("precision".to_string()),
                        Just("accelerator".to_string()),
                        Just("max_num_seqs".to_string()),
                        "[a-z][a-z0-9_./%,=]{0,12}",
                    ],
                    "[ -~]{0,16}",
                ),
                0..6,
            )
        ) {
            let mut config = Config::new();
            for (name, value) in &pairs {
                let _ = config.insert(name, value);
            }
            let text = config.text();
            prop_assert_eq!(text.parse::<Config>(), Ok(config.clone()));
            prop_assert_eq!(text.split(',').count(), config.len().max(1));
            prop_assert!(!text.contains('/'));
        }
    }
}
