//! The solved per-cell targets in `data/demo-recipe.toml` (written offline by `demo/tools/solve_recipe.py`).

use crate::DemoError;
use serde::Deserialize;

const RECIPE_TOML: &str = include_str!("../../data/demo-recipe.toml");

#[derive(Debug, Deserialize)]
pub(crate) struct Recipe {
    pub v1: V1Recipe,
    pub v3: V3Recipe,
}

#[derive(Debug, Deserialize)]
pub(crate) struct V1Recipe {
    pub requests_per_agent: u32,
    pub partial: PartialTarget,
    pub cells: Vec<V1SeriesRep>,
}

/// One (phase, model, workload, rep): the N=1 throughput and the targets at N = 2, 4, 8, 16 (16 absent when skipped).
#[derive(Debug, Deserialize)]
pub(crate) struct V1SeriesRep {
    pub phase: String,
    pub model: String,
    pub workload: String,
    pub rep: u32,
    pub tps_n1: f64,
    pub efficiency: Vec<f64>,
    pub p95_multiplier: Vec<f64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct PartialTarget {
    pub phase: String,
    pub model: String,
    pub workload: String,
    pub n_agents: u32,
    pub rep: u32,
    pub rows: u32,
    pub efficiency: f64,
    pub p95_multiplier: f64,
    pub p50_multiplier: f64,
}

#[derive(Debug, Deserialize)]
pub(crate) struct V3Recipe {
    pub requests_per_agent: u32,
    pub mistral_long_prefill_prompt_tokens: TokenStats,
    pub vllm: V3Backend,
    pub sglang: V3Backend,
}

/// `[min, mean, max]` of prompt_tokens per backend over `n` requests of one phase (the published tokenizer asymmetry).
#[derive(Debug, Deserialize)]
pub(crate) struct TokenStats {
    pub n: u32,
    pub vllm: [u32; 3],
    pub sglang: [u32; 3],
}

#[derive(Debug, Deserialize)]
pub(crate) struct V3Backend {
    pub cells: Vec<V3Cell>,
}

/// One (model, workload) of a backend: rep-mean targets at N = 1, 2, 4, 8, 16, 32.
#[derive(Debug, Deserialize)]
pub(crate) struct V3Cell {
    pub model: String,
    pub workload: String,
    pub tps_n1: f64,
    pub efficiency: Vec<f64>,
    pub p95_multiplier: Vec<f64>,
}

impl Recipe {
    /// Parses the embedded recipe and checks that it describes the grids this crate generates.
    pub(crate) fn load() -> Result<Recipe, DemoError> {
        let recipe: Recipe =
            toml::from_str(RECIPE_TOML).map_err(|error| DemoError::Recipe(error.to_string()))?;
        let partial = &recipe.v1.partial;
        let consistent = recipe.v1.requests_per_agent == 12
            && recipe.v3.requests_per_agent == crate::catalog::V3_REQUESTS_PER_AGENT
            && recipe.v1.cells.len() == 72
            && recipe.v3.vllm.cells.len() == 25
            && recipe.v3.sglang.cells.len() == 25
            && (
                partial.phase.as_str(),
                partial.model.as_str(),
                partial.workload.as_str(),
                partial.n_agents,
                partial.rep,
            ) == ("ttft", "llama3.2-3b", "balanced_2k", 16, 0);
        if consistent {
            Ok(recipe)
        } else {
            Err(DemoError::Recipe(
                "data/demo-recipe.toml does not match the V1/V3 grids of this crate".into(),
            ))
        }
    }

    pub(crate) fn v1_series(
        &self,
        phase: &str,
        model: &str,
        workload: &str,
        rep: u32,
    ) -> Result<&V1SeriesRep, DemoError> {
        self.v1
            .cells
            .iter()
            .find(|cell| {
                cell.phase == phase
                    && cell.model == model
                    && cell.workload == workload
                    && cell.rep == rep
            })
            .ok_or_else(|| {
                DemoError::Recipe(format!(
                    "no v1 targets for {phase}/{model}/{workload}/rep {rep}"
                ))
            })
    }
}

impl V3Backend {
    pub(crate) fn cell(&self, model: &str, workload: &str) -> Result<&V3Cell, DemoError> {
        self.cells
            .iter()
            .find(|cell| cell.model == model && cell.workload == workload)
            .ok_or_else(|| DemoError::Recipe(format!("no v3 targets for {model}/{workload}")))
    }
}
