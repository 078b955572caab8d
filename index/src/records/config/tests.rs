//! The configuration read from paths and contents: every rule on real-looking names and JSON, and the fixtures'
//! configurations as their oracle states them.

use super::*;
use serde_json::json;
use std::path::Path;

/// The path's configuration as `name=value` texts, in the order found.
fn path_config(path: &str) -> Vec<String> {
    config_from_path(path)
        .config
        .iter()
        .map(|setting| format!("{}={}", setting.name, setting.value))
        .collect()
}

/// The text form of what `config_from_path` and `config_from_fields` give together.
fn resolved_text(format: &str, path: &str, record: &Json) -> String {
    resolve(&config_from_path(path), &config_from_fields(format, record))
        .config
        .text()
}

#[test]
fn a_sweep_combination_gives_serve_and_bench_parameters_and_keeps_the_load_apart() {
    let path = "results/20260302_093000/SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8/run=0.json";
    let found = config_from_path(path);
    assert_eq!(path_config(path), ["max_num_seqs=4"]);
    let load: Vec<_> = found
        .load
        .iter()
        .map(|setting| (setting.name.as_str(), setting.value.as_str()))
        .collect();
    assert_eq!(load, [("max_concurrency", "2")]);
    let How::Inferred(rule) = &found.config[0].how else {
        panic!("a path setting is inferred");
    };
    assert!(
        rule.contains("SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8")
            && rule.contains("serve parameter"),
        "{rule}"
    );
    assert_eq!(found.workload, None);
}

#[test]
fn sweep_values_may_hold_dashes_and_keys_may_be_written_with_them() {
    assert_eq!(
        path_config(
            "x/SERVE--kv_cache_dtype=FP8-E4M3-tensor_parallel_size=2-BENCH--request_rate=inf-temperature=0.5/run=1.json"
        ),
        ["kv_cache_dtype=fp8-e4m3", "tp=2", "temperature=0.5"]
    );
    let load = config_from_path("SERVE--max-num-seqs=8-BENCH--max-concurrency=4/run=0.json").load;
    assert_eq!(load.len(), 1);
    assert_eq!(
        (load[0].name.as_str(), load[0].value.as_str()),
        ("max_concurrency", "4")
    );
    assert_eq!(
        path_config("SERVE--model=Qwen_Qwen3-8B-max-num-seqs=8/run=0.json"),
        ["model=Qwen_Qwen3-8B", "max_num_seqs=8"]
    );
    // Named combinations (`_benchmark_name`) and one-sided sweeps.
    assert_eq!(
        path_config("SERVE--low-latency-BENCH--burst/run=0.json"),
        ["serve=low-latency", "bench=burst"]
    );
    assert_eq!(
        path_config("BENCH--max_concurrency=8-Seed=3-Block_Size=16/run=0.json"),
        ["block_size=16"]
    );
}

#[test]
fn an_inferencex_name_gives_its_parallelism_precision_engine_and_accelerator() {
    let found = config_from_path("dsr1_1k1k_fp4_sglang_tp4_ep1_dpa_false_conc4_b200.json");
    assert_eq!(
        path_config("dsr1_1k1k_fp4_sglang_tp4_ep1_dpa_false_conc4_b200.json"),
        [
            "precision=fp4",
            "engine=sglang",
            "tp=4",
            "ep=1",
            "dp_attention=false",
            "accelerator=b200"
        ]
    );
    assert_eq!(found.load[0].value, "4");
    assert_eq!(
        found.workload.as_ref().map(|w| w.value.as_str()),
        Some("1k1k")
    );
    // Upper case, a runner with a suffix, the aggregated copy.
    assert_eq!(
        path_config("runs/agg_gptoss_8k1k_FP8_vllm_tp8_ep8_dpa_True_conc64_H200-trt.json"),
        [
            "precision=fp8",
            "engine=vllm",
            "tp=8",
            "ep=8",
            "dp_attention=true",
            "accelerator=h200"
        ]
    );
    // InferenceX's later form: sizes joined by `-`, disaggregation and speculative decoding, a runner's name.
    assert_eq!(
        path_config(
            "dsr1_1k8k_fp8_dynamo-sglang_tp4-pp1-dcp1-pcp1-ep4-dpatrue_disagg-true_spec-mtp_conc32_gb200-nv_3.json"
        ),
        [
            "precision=fp8",
            "engine=dynamo-sglang",
            "tp=4",
            "pp=1",
            "dcp=1",
            "pcp=1",
            "ep=4",
            "dp_attention=true",
            "disagg=true",
            "spec_decoding=mtp",
            "accelerator=gb200"
        ]
    );
}

#[test]
fn path_tokens_give_parallelism_precision_and_accelerators() {
    assert_eq!(
        path_config("h100/llama-70b-tp4-fp8/dp=2/pp_2/results.json"),
        ["accelerator=h100", "tp=4", "precision=fp8", "dp=2", "pp=2"]
    );
    assert_eq!(
        path_config("8xH100/Llama-3.1-70B-Instruct-AWQ/run.json"),
        ["accelerators=8", "accelerator=h100", "precision=awq"]
    );
    assert_eq!(
        path_config("mi300x_x8/ep8/out.json"),
        ["accelerator=mi300x", "accelerators=8", "ep=8"]
    );
    assert_eq!(
        path_config("tpu-v5e/4gpus/a.json"),
        ["accelerator=tpu-v5e", "accelerators=4"]
    );
    assert_eq!(
        path_config("v6e/tensor_parallel_size=8/a.json"),
        ["accelerator=tpu-v6e", "tp=8"]
    );
    // A deeper component wins over its parents.
    assert_eq!(path_config("tp4/tp8/a.json"), ["tp=8"]);
}

#[test]
fn paths_with_no_parameters_give_an_empty_configuration() {
    for path in [
        "vllm-detailed/openai-infqps-concurrency4-Qwen3-8B-20260301-101745.json",
        "artifacts/meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency4/profile_export_aiperf.json",
        "sglang_0301_40_1024_128.jsonl",
        "llmperf/n4/meta-llama-Llama-3-1-8B-Instruct_256_64_summary.json",
        "results/20260301_101500/summary.csv",
        "",
    ] {
        let found = config_from_path(path);
        assert!(found.config.is_empty(), "{path}: {:?}", found.config);
        assert!(found.load.is_empty() && found.workload.is_none(), "{path}");
    }
}

#[test]
fn sglang_server_info_is_read_and_auto_and_null_are_not_values() {
    let line = json!({
        "backend": "sglang",
        "max_concurrency": 8,
        "server_info": {
            "model_path": "/models/DeepSeek-R1",
            "tp_size": 8, "dp_size": 8, "ep_size": 8, "pp_size": 1,
            "enable_dp_attention": true,
            "quantization": null, "dtype": "auto", "kv_cache_dtype": "FP8_E5M2",
            "version": "0.5.5.post2",
            "max_running_requests": 256,
            "context_length": 16384,
            "chunked_prefill_size": 8192
        }
    });
    assert_eq!(
        resolved_text("sglang-bench", "a.jsonl", &line),
        "dp=8,dp_attention=true,engine_version=0.5.5.post2,ep=8,kv_cache_dtype=fp8_e5m2,max_model_len=16384,\
         max_num_seqs=256,pp=1,tp=8"
    );
    let settings = config_from_fields("sglang-bench", &line);
    let tp = settings
        .iter()
        .find(|setting| setting.name == "tp")
        .unwrap();
    assert_eq!(tp.how, How::Read("field `server_info.tp_size`".into()));
    let quantized = json!({"server_info": {"quantization": "FP8", "dtype": "bfloat16"}});
    assert_eq!(
        resolved_text("sglang-bench", "a.jsonl", &quantized),
        "precision=fp8"
    );
    let unquantized = json!({"server_info": {"quantization": null, "dtype": "bfloat16"}});
    assert_eq!(
        resolved_text("sglang-bench", "a.jsonl", &unquantized),
        "precision=bf16"
    );
}

#[test]
fn the_routers_prefill_and_decode_sides_are_read_apart() {
    let line = json!({"server_info": {
        "internal_states": [{"avg_spec_accept_length": 2.1}],
        "prefill": [{"tp_size": 4, "dp_size": 1}, {"tp_size": 4, "dp_size": 1}],
        "decode": [{"tp_size": 8, "dp_size": 8, "enable_dp_attention": true, "version": "0.5.5"}]
    }});
    assert_eq!(
        resolved_text("sglang-bench", "a.jsonl", &line),
        "decode_dp=8,decode_dp_attention=true,decode_engine_version=0.5.5,decode_servers=1,decode_tp=8,\
         prefill_dp=1,prefill_servers=2,prefill_tp=4"
    );
}

#[test]
fn a_vllm_result_states_the_parameters_a_sweep_or_its_metadata_wrote() {
    let result = json!({
        "date": "20260302-090402", "backend": "vllm", "model_id": "Qwen/Qwen3-8B", "num_prompts": 8,
        "request_rate": "inf", "max_concurrency": 2, "run_number": 0,
        "max_num_seqs": 4, "tensor_parallel_size": 2, "gpu": "H100", "label": null
    });
    assert_eq!(
        resolved_text("vllm-bench", "a.json", &result),
        "accelerator=h100,max_num_seqs=4,tp=2"
    );
    // `--metadata` labels are configuration; lengths are the workload's; an accelerator string is read by the table.
    let labelled = json!({
        "date": "x", "backend": "openai", "model_id": "m", "num_prompts": 5, "deployment": "kv-aware",
        "gateway": "envoy", "gpu": "4xNVIDIA_L40S", "input_len": "1024", "output_len": "128", "workload": "chat"
    });
    assert_eq!(
        resolved_text("vllm-bench", "a.json", &labelled),
        "accelerator=l40s,accelerators=4,deployment=kv-aware,gateway=envoy"
    );
    assert_eq!(
        resolved_text("vllm-bench", "x/8xH100-SXM-80GB_TRT/a.json", &json!({})),
        "accelerator=h100,accelerator_variant=sxm-80gb,accelerators=8"
    );
    let plain = json!({"date": "x", "backend": "openai", "model_id": "m", "num_prompts": 5,
                       "max_concurrency": 4, "request_rate": "inf"});
    assert!(config_from_fields("vllm-bench", &plain).is_empty());
    // Tools that record nothing about the server.
    for format in ["aiperf", "genai-perf", "llmperf", "table"] {
        assert!(config_from_fields(format, &result).is_empty(), "{format}");
    }
    let benchmark = json!({"config": {"backend": {"type_": "openai_http", "target": "http://h:8000",
                                                   "model": "Qwen/Qwen3-8B"}}});
    assert!(config_from_fields("guidellm", &benchmark).is_empty());
}

#[test]
fn the_content_wins_and_a_disagreement_is_a_conflict() {
    let path = "dsr1_1k1k_fp8_sglang_tp4_ep1_dpa_false_conc4_h200.json";
    let line = json!({"server_info": {"tp_size": 8, "ep_size": 1, "quantization": "fp8"}});
    let resolved = resolve(
        &config_from_path(path),
        &config_from_fields("sglang-bench", &line),
    );
    assert_eq!(resolved.config.get("tp"), Some("8"));
    assert_eq!(resolved.config.get("accelerator"), Some("h200"));
    assert_eq!(resolved.conflicts.len(), 1);
    let message = resolved.conflicts[0].message();
    assert!(
        message.starts_with("the path says tp=4 (inferred: path component `dsr1_1k1k_fp8")
            && message.contains("the file says tp=8 (field `server_info.tp_size`)"),
        "{message}"
    );
    assert_eq!(
        resolved.how.get("tp"),
        Some(&How::Read("field `server_info.tp_size`".into()))
    );
}

/// The configurations the fixtures' oracle states, per source file.
fn oracle(name: &str) -> Vec<(String, Config)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats");
    let text = std::fs::read_to_string(root.join(format!("{name}.expected.json"))).expect("oracle");
    let expected: Json = serde_json::from_str(&text).expect("oracle JSON");
    expected["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .map(|cell| {
            let source = cell["source"].as_str().expect("source").to_string();
            let config = serde_json::from_value(cell["config"].clone()).expect("config");
            (source, config)
        })
        .collect()
}

/// The fixture's file at `source`, as JSON.
fn fixture(name: &str, source: &str) -> Json {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/fixtures/formats")
        .join(name)
        .join(source);
    serde_json::from_slice(&std::fs::read(path).expect("fixture file")).expect("fixture JSON")
}

#[test]
fn the_fixtures_configurations_are_the_oracles() {
    for name in ["vllm-inferencex", "vllm-sweep-config"] {
        let cells = oracle(name);
        assert!(!cells.is_empty(), "{name}");
        let mut configs = Vec::new();
        for (source, want) in cells {
            let resolved = resolve(
                &config_from_path(&source),
                &config_from_fields("vllm-bench", &fixture(name, &source)),
            );
            assert_eq!(resolved.config, want, "{name} {source}");
            assert!(resolved.conflicts.is_empty(), "{name} {source}");
            configs.push(resolved.config);
        }
        configs.sort();
        configs.dedup();
        assert!(
            configs.len() > 1,
            "{name}: the files are different deployments"
        );
    }
}

#[test]
fn explain_shows_each_parameter_where_it_was_found_and_the_conflicts() {
    let path = "SERVE--max_num_seqs=4-BENCH--max_concurrency=2/run=0.json";
    let lines = explain_lines("vllm-bench", path, &json!({"max_num_seqs": 8}));
    assert_eq!(lines[0], "configuration: max_num_seqs=8");
    assert!(
        lines[1].contains("max_num_seqs") && lines[1].contains("field `max_num_seqs`"),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("  conflict: the path says max_num_seqs=4"),
        "{lines:?}"
    );
    assert_eq!(
        explain_lines(
            "aiperf",
            "artifacts/x/profile_export_aiperf.json",
            &json!({})
        ),
        ["configuration: none stated by the path or the file"]
    );
}
