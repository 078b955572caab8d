//! What else differs between the two sides of a comparison: for each [`EnvironmentField`] (GPU, driver, CUDA,
//! torch, backend version, install, max model length, extra args), the values the runs behind side a and side b
//! were made with, each with the runs it comes from. A head-to-head between backends that ran on different
//! drivers or with different context ceilings measures those differences too, so the comparison names them.
//!
//! The runs behind a side are the runs whose rows make the cells of its formed pairs: a cell's run, or for a
//! refilled cell the refill run whose rows stand in it (`source_run_id`; its key names the master run). Dropped
//! pairs contribute nothing, so a refill whose cells the ledger leaves out of the comparison does not show.

use crate::compare::{CompareSpec, Comparison, Side};
use crate::facts::{EnvironmentField, RunFacts};
use crate::key::CellKey;
use crate::summary::CellSummary;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A run behind one side of a comparison.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideRun {
    /// The run's id.
    pub run_id: String,
    /// For a refill run: the master its rows were spliced into (the run id its cells carry).
    pub refill_of: Option<String>,
}

impl SideRun {
    /// `20260613_055519_963364 (refill of 20260612_212816_266127)`.
    pub fn describe(&self) -> String {
        match &self.refill_of {
            Some(master) => format!("{} (refill of {master})", self.run_id),
            None => self.run_id.clone(),
        }
    }
}

/// One value of a field on one side, and the runs of that side that have it. `value: None` gathers the runs
/// that do not state the field (shown as `—`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldValue {
    /// The value, `None` where the runs do not state the field.
    pub value: Option<String>,
    /// The runs with this value.
    pub runs: Vec<String>,
}

impl FieldValue {
    /// `575.57 (20260612_212816_266127, 20260613_055519_963364)`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({})",
            self.value.as_deref().unwrap_or("—"),
            self.runs.join(", ")
        )
    }
}

/// One field on both sides: every run of a side appears under exactly one of its values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldContrast {
    /// The field.
    pub field: EnvironmentField,
    /// `field.label()`, for readers of the JSON.
    pub label: String,
    /// The distinct values on side a, in the order of the first run having each (runs are in id order, which
    /// for TR164's timestamp ids is the order they ran in: a master before its refill).
    pub a: Vec<FieldValue>,
    /// The distinct values on side b, in the same order.
    pub b: Vec<FieldValue>,
}

impl FieldContrast {
    /// One side's values.
    pub fn side(&self, side: Side) -> &[FieldValue] {
        match side {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }

    /// One side's values: `8768 (20260612_212816_266127); 11264 (20260613_055519_963364)`.
    pub fn describe_side(&self, side: Side) -> String {
        self.side(side)
            .iter()
            .map(FieldValue::describe)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// What else differs between the runs behind side a and side b.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confounders {
    /// The runs behind side a.
    pub a_runs: Vec<SideRun>,
    /// The runs behind side b.
    pub b_runs: Vec<SideRun>,
    /// Fields whose values differ between the sides, a field only one side states included, in
    /// [`EnvironmentField::ALL`] order.
    pub differing: Vec<FieldContrast>,
    /// Fields with the same values on both sides: shown as a count, listed here for who wants them. A field no
    /// run of either side states is in neither list.
    pub equal: Vec<FieldContrast>,
}

impl Confounders {
    /// The runs behind one side.
    pub fn runs(&self, side: Side) -> &[SideRun] {
        match side {
            Side::A => &self.a_runs,
            Side::B => &self.b_runs,
        }
    }

    /// `What else differs between vllm and sglang`.
    pub fn heading(spec: &CompareSpec) -> String {
        format!("What else differs between {} and {}", spec.a, spec.b)
    }

    /// `7 fields equal on both sides`.
    pub fn equal_summary(&self) -> String {
        match self.equal.len() {
            1 => "1 field equal on both sides".into(),
            count => format!("{count} fields equal on both sides"),
        }
    }
}

/// The environment fields of the runs behind each side of `comparison`. `cells` are the cells the comparison
/// was made from (they say which refilled cells' rows come from a refill run); `runs` are the index's run facts.
/// A run without facts states no field.
pub fn confounders(
    comparison: &Comparison,
    cells: &[CellSummary],
    runs: &[RunFacts],
) -> Confounders {
    let sources: BTreeMap<&CellKey, &str> = crate::order::btree_map(cells.iter().map(|cell| {
        (
            &cell.key,
            cell.source_run_id.as_deref().unwrap_or(&cell.key.run_id),
        )
    }));
    let mut sides: [BTreeSet<&str>; 2] = Default::default();
    for pair in comparison.groups.iter().flat_map(|group| &group.pairs) {
        for (side, keys) in sides.iter_mut().zip([&pair.a_cells, &pair.b_cells]) {
            for key in keys {
                side.insert(sources.get(key).copied().unwrap_or(&key.run_id));
            }
        }
    }
    let facts: BTreeMap<&str, &RunFacts> =
        crate::order::btree_map(runs.iter().map(|run| (run.run_id.as_str(), run)));
    let side_runs = |ids: &BTreeSet<&str>| -> Vec<SideRun> {
        ids.iter()
            .map(|id| SideRun {
                run_id: (*id).to_string(),
                refill_of: facts.get(id).and_then(|run| run.refill_of.clone()),
            })
            .collect()
    };
    let values = |ids: &BTreeSet<&str>, field: EnvironmentField| -> Vec<FieldValue> {
        let mut values: Vec<FieldValue> = Vec::new();
        for id in ids {
            let value = facts
                .get(id)
                .and_then(|run| run.environment.get(&field))
                .cloned();
            match values.iter_mut().find(|known| known.value == value) {
                Some(known) => known.runs.push((*id).to_string()),
                None => values.push(FieldValue {
                    value,
                    runs: vec![(*id).to_string()],
                }),
            }
        }
        values
    };
    let [a_ids, b_ids] = &sides;
    let mut confounders = Confounders {
        a_runs: side_runs(a_ids),
        b_runs: side_runs(b_ids),
        ..Confounders::default()
    };
    for field in EnvironmentField::ALL {
        let a = values(a_ids, field);
        let b = values(b_ids, field);
        if a.iter().chain(&b).all(|value| value.value.is_none()) {
            continue;
        }
        // Equal when both sides hold the same set of values (which runs hold them does not matter).
        let same = a.len() == b.len() && a.iter().all(|x| b.iter().any(|y| y.value == x.value));
        let contrast = FieldContrast {
            field,
            label: field.label().to_string(),
            a,
            b,
        };
        if same {
            confounders.equal.push(contrast);
        } else {
            confounders.differing.push(contrast);
        }
    }
    confounders
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Census, CompareBody, FileDigest, RunRole};
    use crate::compare::compare;
    use crate::exclusions::ExclusionScope;
    use crate::key::Dimension;
    use crate::metric::Metric;
    use crate::stat::Stat;
    use crate::stats::CellStats;
    use crate::status::CellStatus;
    use crate::view_state::WhatIf;

    const VLLM: &str = "20260612_204254_036590";
    const SGLANG: &str = "20260612_212816_266127";
    const REFILL: &str = "20260613_055519_963364";

    fn run(id: &str, refill_of: Option<&str>, fields: &[(EnvironmentField, &str)]) -> RunFacts {
        RunFacts {
            run_id: id.to_string(),
            path: format!("tr164-v3/{id}"),
            role: if refill_of.is_some() {
                RunRole::Refill
            } else {
                RunRole::Run
            },
            refill_of: refill_of.map(str::to_string),
            copy_of: None,
            manifest_status: None,
            has_plan: false,
            census: Census::default(),
            metrics: FileDigest::default(),
            files: Vec::new(),
            refill: None,
            backups: Vec::new(),
            exclusions: BTreeMap::new(),
            suites: Vec::new(),
            environment: fields
                .iter()
                .map(|(field, value)| (*field, (*value).to_string()))
                .collect(),
            inferred: Vec::new(),
            started: None,
        }
    }

    /// Runs shaped like the demo's V3 runs: the same GPU, different drivers, torch and installs; the refill
    /// differs in its context ceiling only.
    fn runs() -> Vec<RunFacts> {
        use EnvironmentField::*;
        let sglang = [
            (Gpu, "NVIDIA A100 80GB PCIe"),
            (Driver, "575.57"),
            (Torch, "2.11.0+cu130"),
            (BackendVersion, "0.5.12.post1"),
            (Install, "native launcher"),
            (MaxModelLen, "8768"),
        ];
        let mut refill = sglang;
        refill[5] = (MaxModelLen, "11264");
        vec![
            run(
                VLLM,
                None,
                &[
                    (Gpu, "NVIDIA A100 80GB PCIe"),
                    (Driver, "580.159"),
                    (Torch, "2.8.0+cu128"),
                    (BackendVersion, "0.10.2"),
                    (Install, "native venv"),
                    (MaxModelLen, "8768"),
                    (ModelExtraArgs, "mistral-7b: --tokenizer-mode mistral"),
                ],
            ),
            run(SGLANG, None, &sglang),
            run(REFILL, Some(SGLANG), &refill),
        ]
    }

    fn cell(run_id: &str, backend: &str, model: &str, rep: u32) -> CellSummary {
        let mut cell = CellSummary::empty(
            CellKey {
                run_id: run_id.into(),
                suite: "cloud_core".into(),
                phase: "scaling".into(),
                backend: backend.into(),
                model: model.into(),
                workload: "long_prefill_8k".into(),
                config: Default::default(),
                load: crate::Load::Concurrency(2),
                rep,
            },
            CellStatus::Clean,
        );
        cell.rows = 20;
        cell.ok_rows = 20;
        cell.stats = CellStats {
            ok_rows: 20,
            aggregate_tps: Some(100.0 + f64::from(rep)),
            ..CellStats::default()
        };
        cell
    }

    /// Two models on each backend; the SGLang Mistral cells are refilled, their rows from the refill run.
    fn cells() -> Vec<CellSummary> {
        let mut cells = Vec::new();
        for model in ["qwen2.5-7b", "mistral-7b"] {
            for rep in 0..2 {
                cells.push(cell(VLLM, "vllm", model, rep));
                let mut sglang = cell(SGLANG, "sglang", model, rep);
                if model == "mistral-7b" {
                    sglang.refilled = true;
                    sglang.source_run_id = Some(REFILL.into());
                }
                cells.push(sglang);
            }
        }
        cells
    }

    fn spec() -> CompareSpec {
        CompareSpec {
            by: Dimension::Backend,
            a: "vllm".into(),
            b: "sglang".into(),
            per: Some(Dimension::Workload),
            metric: Metric::Stat(Stat::AggregateTps),
            alpha: 0.05,
            slo: String::new(),
        }
    }

    fn of(cells: &[CellSummary], what_if: &WhatIf) -> (Comparison, Confounders) {
        let slice: Vec<&CellSummary> = cells.iter().collect();
        let comparison = compare(&slice, &spec(), what_if);
        let confounders = confounders(&comparison, cells, &runs());
        (comparison, confounders)
    }

    fn contrast(confounders: &Confounders, field: EnvironmentField) -> &FieldContrast {
        confounders
            .differing
            .iter()
            .chain(&confounders.equal)
            .find(|contrast| contrast.field == field)
            .unwrap_or_else(|| panic!("no {field:?} in {confounders:?}"))
    }

    #[test]
    fn differing_fields_name_each_sides_values_and_runs_and_equal_ones_are_set_apart() {
        let (_, confounders) = of(&cells(), &WhatIf::DEFAULT);
        assert_eq!(
            confounders
                .b_runs
                .iter()
                .map(SideRun::describe)
                .collect::<Vec<_>>(),
            [SGLANG.to_string(), format!("{REFILL} (refill of {SGLANG})")]
        );
        let differing: Vec<EnvironmentField> = confounders
            .differing
            .iter()
            .map(|contrast| contrast.field)
            .collect();
        use EnvironmentField::*;
        assert_eq!(
            differing,
            [
                Driver,
                Torch,
                BackendVersion,
                Install,
                MaxModelLen,
                ModelExtraArgs
            ]
        );
        let equal: Vec<EnvironmentField> = confounders.equal.iter().map(|c| c.field).collect();
        assert_eq!(equal, [Gpu]);
        assert_eq!(confounders.equal_summary(), "1 field equal on both sides");
        let driver = contrast(&confounders, Driver);
        assert_eq!(driver.label, "driver");
        assert_eq!(driver.describe_side(Side::A), format!("580.159 ({VLLM})"));
        assert_eq!(
            driver.describe_side(Side::B),
            format!("575.57 ({SGLANG}, {REFILL})")
        );
        // The refill's override is a second value on the SGLang side, with the run it comes from.
        let ceiling = contrast(&confounders, MaxModelLen);
        assert_eq!(
            ceiling.describe_side(Side::B),
            format!("8768 ({SGLANG}); 11264 ({REFILL})")
        );
        // Stated on one side only: differing, `—` on the other.
        let tokenizer = contrast(&confounders, ModelExtraArgs);
        assert_eq!(
            tokenizer.describe_side(Side::B),
            format!("— ({SGLANG}, {REFILL})")
        );
        // No run states the CUDA version here: in neither list.
        assert!(
            !confounders
                .differing
                .iter()
                .chain(&confounders.equal)
                .any(|contrast| contrast.field == Cuda)
        );
        assert_eq!(
            Confounders::heading(&spec()),
            "What else differs between vllm and sglang"
        );
    }

    #[test]
    fn a_refill_whose_cells_the_ledger_leaves_out_is_not_behind_its_side() {
        let mut cells = cells();
        for cell in &mut cells {
            if cell.key.model == "mistral-7b" {
                cell.excluded = vec!["mistral-long-prefill-tokenizer".into()];
                cell.exclusion_scope = Some(ExclusionScope::Comparison);
            }
        }
        let (comparison, confounders) = of(&cells, &WhatIf::DEFAULT);
        assert_eq!(comparison.groups[0].dropped.len(), 1);
        assert_eq!(
            confounders.b_runs,
            [SideRun {
                run_id: SGLANG.into(),
                refill_of: None
            }]
        );
        // Without the refill both sides ran at 8,768.
        assert!(
            confounders
                .equal
                .iter()
                .any(|contrast| contrast.field == EnvironmentField::MaxModelLen)
        );
        // The what-if that admits excluded cells brings the refill back.
        let (_, included) = of(
            &cells,
            &WhatIf {
                excluded: true,
                ..WhatIf::DEFAULT
            },
        );
        assert_eq!(included.b_runs.len(), 2);
    }

    #[test]
    fn a_run_without_facts_or_a_field_counts_as_not_stating_it() {
        let mut cells = cells();
        // A second vLLM run with no facts at all stands in for one rep.
        cells[0].key.run_id = "20260614_000000_000000".into();
        let (_, confounders) = of(&cells, &WhatIf::DEFAULT);
        assert_eq!(confounders.a_runs.len(), 2);
        let gpu = contrast(&confounders, EnvironmentField::Gpu);
        assert_eq!(
            gpu.describe_side(Side::A),
            format!("NVIDIA A100 80GB PCIe ({VLLM}); — (20260614_000000_000000)")
        );
        assert!(confounders.equal.is_empty(), "{confounders:?}");
        assert_eq!(confounders.equal_summary(), "0 fields equal on both sides");
    }

    #[test]
    fn the_compare_body_keeps_the_comparison_keys_at_the_top_and_round_trips() {
        let cells = cells();
        let (comparison, confounders) = of(&cells, &WhatIf::DEFAULT);
        let body = CompareBody {
            comparison,
            confounders,
        };
        let json = serde_json::to_value(&body).unwrap();
        let mut keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        keys.sort_unstable();
        assert_eq!(keys, ["confounders", "groups", "spec"]);
        assert_eq!(
            json["confounders"]["differing"][0]["b"][0],
            serde_json::json!({"value": "575.57", "runs": [SGLANG, REFILL]})
        );
        assert_eq!(json["confounders"]["differing"][0]["field"], "driver");
        let back: CompareBody = serde_json::from_value(json).unwrap();
        assert_eq!(back, body);
    }
}
