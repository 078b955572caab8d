//! The fixed vocabulary of the two TR164 studies: models, workloads, grids, as their reports list them.

/// A model as metrics.csv identifies it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Model {
    pub name: &'static str,
    pub hf_id: &'static str,
    pub tier: &'static str,
    /// Written as text because App. B gives the skip-row values as strings ('1.24').
    pub params_b: &'static str,
    /// How many prompt tokens this model's tokenizer makes of the char-matched long_prefill_8k prompt (V3).
    pub long_prefill_tokens: u32,
    /// Relative prefill cost per prompt token (decode-equivalents), shaping ttft and prefill_ms.
    pub prefill_cost: f64,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Workload {
    pub name: &'static str,
    pub prompt_target_tokens: u32,
    pub max_new_tokens: u32,
    /// Probability that a request stops before max_new_tokens (EOS), per workload character.
    pub early_stop: f64,
}

/// V1 models (App. B; the report does not map models to tiers: the two smallest are `small`, llama3.2-3b
/// `small_plus`).
pub(crate) const V1_MODELS: [Model; 3] = [
    Model {
        name: "llama3.2-1b",
        hf_id: "unsloth/Llama-3.2-1B-Instruct",
        tier: "small",
        params_b: "1.24",
        long_prefill_tokens: 0,
        prefill_cost: 0.50,
    },
    Model {
        name: "qwen2.5-1.5b",
        hf_id: "Qwen/Qwen2.5-1.5B-Instruct",
        tier: "small",
        params_b: "1.54",
        long_prefill_tokens: 0,
        prefill_cost: 0.52,
    },
    Model {
        name: "llama3.2-3b",
        hf_id: "unsloth/Llama-3.2-3B-Instruct",
        tier: "small_plus",
        params_b: "3.21",
        long_prefill_tokens: 0,
        prefill_cost: 0.55,
    },
];

/// V1 workloads in plan order (App. B budgets).
pub(crate) const V1_WORKLOADS: [Workload; 4] = [
    Workload {
        name: "short_decode",
        prompt_target_tokens: 256,
        max_new_tokens: 128,
        early_stop: 0.15,
    },
    Workload {
        name: "balanced_2k",
        prompt_target_tokens: 1024,
        max_new_tokens: 512,
        early_stop: 0.3,
    },
    Workload {
        name: "long_decode",
        prompt_target_tokens: 1024,
        max_new_tokens: 512,
        early_stop: 0.08,
    },
    Workload {
        name: "repeated_prefix",
        prompt_target_tokens: 2048,
        max_new_tokens: 128,
        early_stop: 0.12,
    },
];

pub(crate) const V1_NS: [u32; 5] = [1, 2, 4, 8, 16];
pub(crate) const PHASES: [&str; 2] = ["scaling", "ttft"];
pub(crate) const REPS: [u32; 3] = [0, 1, 2];
/// Requests each agent of a V3 cell sends (10N rows per cell, the one rule that gives every stated V3 row count).
pub(crate) const V3_REQUESTS_PER_AGENT: u32 = 10;

/// V3 models (hf ids, tiers and sizes are not in the seeds: public ids; tiers read as production_small = 7B/8B,
/// upper_single_gpu = 14B).
pub(crate) const V3_MODELS: [Model; 5] = [
    Model {
        name: "qwen2.5-7b",
        hf_id: "Qwen/Qwen2.5-7B-Instruct",
        tier: "production_small",
        params_b: "7.62",
        long_prefill_tokens: 8412,
        prefill_cost: 0.012,
    },
    Model {
        name: "llama3.1-8b",
        hf_id: "meta-llama/Llama-3.1-8B-Instruct",
        tier: "production_small",
        params_b: "8.03",
        long_prefill_tokens: 8296,
        prefill_cost: 0.012,
    },
    Model {
        name: "mistral-7b",
        hf_id: "mistralai/Mistral-7B-Instruct-v0.3",
        tier: "production_small",
        params_b: "7.25",
        long_prefill_tokens: 0,
        prefill_cost: 0.012,
    },
    Model {
        name: "qwen2.5-14b",
        hf_id: "Qwen/Qwen2.5-14B-Instruct",
        tier: "upper_single_gpu",
        params_b: "14.77",
        long_prefill_tokens: 8412,
        prefill_cost: 0.014,
    },
    Model {
        name: "phi-4",
        hf_id: "microsoft/phi-4",
        tier: "upper_single_gpu",
        params_b: "14.66",
        long_prefill_tokens: 8231,
        prefill_cost: 0.014,
    },
];

/// V3 workloads in plan order; the four shared ones reuse V1 budgets, long_prefill_8k is 8704/64 (the V3
/// report states no other budget).
pub(crate) const V3_WORKLOADS: [Workload; 5] = [
    Workload {
        name: "short_decode",
        prompt_target_tokens: 256,
        max_new_tokens: 128,
        early_stop: 0.0,
    },
    Workload {
        name: "balanced_2k",
        prompt_target_tokens: 1024,
        max_new_tokens: 512,
        early_stop: 0.0,
    },
    Workload {
        name: "long_prefill_8k",
        prompt_target_tokens: 8704,
        max_new_tokens: 64,
        early_stop: 0.0,
    },
    Workload {
        name: "long_decode",
        prompt_target_tokens: 1024,
        max_new_tokens: 512,
        early_stop: 0.0,
    },
    Workload {
        name: "repeated_prefix",
        prompt_target_tokens: 2048,
        max_new_tokens: 128,
        early_stop: 0.0,
    },
];

pub(crate) const V3_NS: [u32; 6] = [1, 2, 4, 8, 16, 32];

pub(crate) fn n_index(ns: &[u32], n: u32) -> usize {
    ns.iter().position(|value| *value == n).unwrap_or(0)
}
