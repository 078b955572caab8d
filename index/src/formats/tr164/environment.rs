//! How a run was made, as [`EnvironmentField`]s: from `manifest.json`'s `environment` (what the dispatcher
//! captured: GPU, driver, CUDA, Python, packages, install) and from `config.yaml` (what the servers were launched
//! with: context ceiling, extra arguments). The keys are in docs/run-format.md, "How a run was made". Every key is
//! optional and read leniently: a value of an unexpected shape states nothing, as an absent one does, because
//! these files are free-form captures; only a `config.yaml` that is not YAML at all is a warning (by the caller).

use cellscope_model::api::EnvironmentField;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A `config.yaml` that could not be read, with the line the YAML parser names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct YamlProblem {
    pub line: Option<u64>,
    pub message: String,
}

/// Reads a YAML document into JSON values, so the manifest and the config are looked into the same way.
pub(crate) fn parse_config(bytes: &[u8]) -> Result<Value, YamlProblem> {
    crate::parse::yaml::parse(bytes).map_err(|error| YamlProblem {
        line: error.line,
        message: error.message,
    })
}

/// A scalar as text (`None` for null, empty text, arrays and objects).
fn scalar(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(text) => text.trim().to_string(),
        Value::Number(number) => number.to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Null | Value::Array(_) | Value::Object(_) => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// The value at a path of object keys.
fn at<'a>(value: Option<&'a Value>, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value?, |value, key| value.as_object()?.get(*key))
}

/// Launch arguments as one line: a list is joined with spaces (an argument with a space in it is quoted), a
/// string is kept as written.
fn arguments(value: &Value) -> Option<String> {
    match value {
        Value::Array(items) => {
            let words: Vec<String> = items
                .iter()
                .filter_map(scalar)
                .map(|word| {
                    if word.contains(char::is_whitespace) {
                        format!("\"{word}\"")
                    } else {
                        word
                    }
                })
                .collect();
            (!words.is_empty()).then(|| words.join(" "))
        }
        other => scalar(other),
    }
}

/// One value per backend of the run: the value itself when the run has one backend (or they all agree),
/// `vllm: …; sglang: …` when they differ.
fn per_backend(
    backends: &BTreeSet<String>,
    value_of: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    let values: Vec<(&String, String)> = backends
        .iter()
        .filter_map(|backend| Some((backend, value_of(backend)?)))
        .collect();
    let distinct: BTreeSet<&String> = values.iter().map(|(_, value)| value).collect();
    match distinct.len() {
        0 => None,
        1 if values.len() == backends.len() => Some(values[0].1.clone()),
        _ => Some(
            values
                .iter()
                .map(|(backend, value)| format!("{backend}: {value}"))
                .collect::<Vec<_>>()
                .join("; "),
        ),
    }
}

/// What one run's side files state. `captured` is `manifest.json`'s `environment`, `manifest_max_model_len` its
/// `default_max_model_len` (or `max_model_len`), `config` the run's `config.yaml` as JSON values, `backends` the
/// backends of the run's rows (backend-specific keys are looked up under their names).
pub(crate) fn environment(
    captured: Option<&Value>,
    manifest_max_model_len: Option<&Value>,
    config: Option<&Value>,
    backends: &BTreeSet<String>,
) -> BTreeMap<EnvironmentField, String> {
    let captured_text = |path: &[&str]| at(captured, path).and_then(scalar);
    let mut fields = BTreeMap::new();
    let mut state = |field: EnvironmentField, value: Option<String>| {
        if let Some(value) = value {
            fields.insert(field, value);
        }
    };
    state(
        EnvironmentField::Gpu,
        captured_text(&["gpu", "name"]).or_else(|| captured_text(&["gpu"])),
    );
    state(
        EnvironmentField::GpuMemoryMib,
        captured_text(&["gpu", "memory_total_mib"]),
    );
    state(
        EnvironmentField::Driver,
        captured_text(&["gpu", "driver_version"]),
    );
    // TR164 V1's capture holds an nvidia-smi error object here: not a version, so not stated.
    state(
        EnvironmentField::Cuda,
        captured_text(&["gpu", "cuda_version"]),
    );
    state(
        EnvironmentField::CudaCompat,
        captured_text(&["cuda_compat"]),
    );
    state(EnvironmentField::Python, captured_text(&["python"]));
    state(
        EnvironmentField::Torch,
        captured_text(&["torch"]).or_else(|| captured_text(&["packages", "torch"])),
    );
    state(
        EnvironmentField::BackendVersion,
        per_backend(backends, |backend| {
            captured_text(&[backend]).or_else(|| captured_text(&["packages", backend]))
        }),
    );
    state(EnvironmentField::Install, captured_text(&["install"]));
    // The config is what the servers were launched with; the manifest's copy is the fallback.
    state(
        EnvironmentField::MaxModelLen,
        ["default_max_model_len", "max_model_len"]
            .iter()
            .find_map(|key| at(config, &[key]).and_then(scalar))
            .or_else(|| manifest_max_model_len.and_then(scalar)),
    );
    state(
        EnvironmentField::BackendExtraArgs,
        per_backend(backends, |backend| {
            at(config, &["backend_extra_args", backend]).and_then(arguments)
        }),
    );
    state(
        EnvironmentField::ModelExtraArgs,
        per_backend(backends, |backend| {
            let models = at(config, &["models"])?.as_array()?;
            let per_model: Vec<String> = models
                .iter()
                .filter_map(|model| {
                    let name = at(Some(model), &["name"]).and_then(scalar)?;
                    let words =
                        at(Some(model), &["backend_extra_args", backend]).and_then(arguments)?;
                    Some(format!("{name}: {words}"))
                })
                .collect();
            (!per_model.is_empty()).then(|| per_model.join("; "))
        }),
    );
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use EnvironmentField::*;

    fn backends(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    /// The SGLang manifest capture and config of TR164 V3, as the demo writes them.
    const SGLANG_CAPTURE: &str = r#"{
        "gpu": {"name": "NVIDIA A100 80GB PCIe", "memory_total_mib": 81920, "driver_version": "575.57",
                "cuda_version": "12.9"},
        "python": "3.12.3", "torch": "2.11.0+cu130", "sglang": "0.5.12.post1",
        "cuda_compat": "cuda-compat-13-0", "install": "native launcher"}"#;
    const CONFIG: &str = "# config_mistral_refill.yaml\nversion: 0.2_cloud5_3rep\n\
        models:\n  - {name: qwen2.5-7b, hf_id: Qwen/Qwen2.5-7B-Instruct}\n\
        \x20 - {name: mistral-7b, hf_id: x, backend_extra_args: {vllm: [--tokenizer-mode, mistral]}}\n\
        default_max_model_len: 11264\n\
        backend_extra_args:\n  vllm: [--dtype, float16, --gpu-memory-utilization, \"0.86\"]\n\
        \x20 sglang: [--dtype, float16, --mem-fraction-static, 0.82, --cuda-graph-max-bs, 32]\n";

    #[test]
    fn the_capture_and_the_config_give_every_field_of_the_runs_backend() {
        let captured: Value = serde_json::from_str(SGLANG_CAPTURE).unwrap();
        let config = parse_config(CONFIG.as_bytes()).unwrap();
        let fields = environment(
            Some(&captured),
            Some(&Value::from(8768)),
            Some(&config),
            &backends(&["sglang"]),
        );
        let expected = [
            (Gpu, "NVIDIA A100 80GB PCIe"),
            (GpuMemoryMib, "81920"),
            (Driver, "575.57"),
            (Cuda, "12.9"),
            (CudaCompat, "cuda-compat-13-0"),
            (Python, "3.12.3"),
            (Torch, "2.11.0+cu130"),
            (BackendVersion, "0.5.12.post1"),
            (Install, "native launcher"),
            // The config's override wins over the manifest's copy.
            (MaxModelLen, "11264"),
            // Unquoted YAML numbers read back as the text they were.
            (
                BackendExtraArgs,
                "--dtype float16 --mem-fraction-static 0.82 --cuda-graph-max-bs 32",
            ),
        ];
        assert_eq!(
            fields,
            expected
                .into_iter()
                .map(|(field, value)| (field, value.to_string()))
                .collect::<BTreeMap<_, _>>()
        );
        let vllm = environment(None, None, Some(&config), &backends(&["vllm"]));
        assert_eq!(
            vllm[&ModelExtraArgs],
            "mistral-7b: --tokenizer-mode mistral"
        );
        assert_eq!(
            vllm[&BackendExtraArgs],
            "--dtype float16 --gpu-memory-utilization 0.86"
        );
    }

    #[test]
    fn odd_shapes_state_nothing_and_two_backends_are_named() {
        // TR164 V1: packages nested, the CUDA version an error object, no install.
        let captured: Value = serde_json::from_str(
            r#"{"gpu": {"name": "RTX", "cuda_version": {"error": "not a valid field"}},
                "packages": {"torch": "2.7.1+cu128", "vllm": "0.9"}, "sglang": "0.5", "install": ["x"]}"#,
        )
        .unwrap();
        let ceiling = Value::from(2432);
        let fields = environment(
            Some(&captured),
            Some(&ceiling),
            None,
            &backends(&["sglang", "vllm"]),
        );
        assert_eq!(fields.get(&Cuda), None);
        assert_eq!(fields.get(&Install), None);
        assert_eq!(fields[&Torch], "2.7.1+cu128");
        assert_eq!(fields[&BackendVersion], "sglang: 0.5; vllm: 0.9");
        assert_eq!(fields[&MaxModelLen], "2432");
        assert!(environment(None, None, None, &backends(&["vllm"])).is_empty());
        // One of two backends stating a version is named, so it is not taken for both.
        let one = environment(
            Some(&captured),
            None,
            None,
            &backends(&["pytorch_direct", "vllm"]),
        );
        assert_eq!(one[&BackendVersion], "vllm: 0.9");
    }

    #[test]
    fn a_config_that_is_not_yaml_names_its_line() {
        let problem = parse_config(b"models:\n  - {name: x\nseed: 164\n").unwrap_err();
        assert_eq!(problem.line, Some(3), "{problem:?}");
        // Keys that are not text become their text; tags are looked through.
        let config = parse_config(b"1: one\nn: !int 8768\nargs: [\"a b\", c]\n").unwrap();
        assert_eq!(config["1"], "one");
        assert_eq!(config["n"], 8768);
        assert_eq!(arguments(&config["args"]).unwrap(), "\"a b\" c");
    }
}
