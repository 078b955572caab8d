//! How runs are named and counted for a reader: a run id with the backends and start time it stands for
//! (`20260612_204254_036590` → `vllm · 2026-06-12 20:42`), and a count of runs that agrees with the run filter,
//! which lists the runs that hold cells.

use crate::api::{IndexBody, RunFacts, RunRole};
use crate::key::Dimension;
use crate::summary::CellSummary;

/// `2026-06-12 20:42` from an id that starts with a `YYYYMMDD_HHMMSS` timestamp, as TR164 run ids and many tools'
/// result directories do; `None` otherwise.
pub fn started_from_id(run_id: &str) -> Option<String> {
    id_time(run_id).map(|at| format!("{} {}", &at[..10], &at[11..16]))
}

/// The time an id that starts with `YYYYMMDD_HHMM[SS]` names, in RFC 3339 as the id writes it (seconds 00 when
/// the id has none), for a run's start when its files record none; `None` for any other id.
pub fn id_time(run_id: &str) -> Option<String> {
    let digits = |range: std::ops::Range<usize>| {
        let part = run_id.get(range)?;
        part.bytes()
            .all(|byte| byte.is_ascii_digit())
            .then_some(part)
    };
    let (year, month, day) = (digits(0..4)?, digits(4..6)?, digits(6..8)?);
    if run_id.as_bytes().get(8) != Some(&b'_') {
        return None;
    }
    let (hour, minute) = (digits(9..11)?, digits(11..13)?);
    let second = digits(13..15).unwrap_or("00");
    let valid = (1..=12).contains(&month.parse::<u32>().ok()?)
        && (1..=31).contains(&day.parse::<u32>().ok()?)
        && hour.parse::<u32>().ok()? < 24
        && minute.parse::<u32>().ok()? < 60
        && second.parse::<u32>().ok()? < 60;
    valid.then(|| format!("{year}-{month}-{day}T{hour}:{minute}:{second}Z"))
}

/// What a run id stands for, to show beside it: the backends of its cells and its start time when the id
/// carries one (`vllm · 2026-06-12 20:42`); empty when neither is known.
pub fn run_label(run_id: &str, cells: &[CellSummary]) -> String {
    let backends = crate::order::sorted_distinct(
        cells
            .iter()
            .filter(|cell| cell.key.run_id == run_id)
            .map(|cell| cell.key.backend.clone()),
    );
    let mut parts = Vec::new();
    if !backends.is_empty() {
        parts.push(backends.join(", "));
    }
    parts.extend(started_from_id(run_id));
    parts.join(" · ")
}

/// The runs in the order of their start (latest first when `descending`), a run whose start nothing says
/// last either way, runs of one start by id: the Audit's runs table sorted by its `started` column.
pub fn by_start(runs: &[RunFacts], descending: bool) -> Vec<&RunFacts> {
    let mut sorted: Vec<&RunFacts> = runs.iter().collect();
    crate::order::sort_stable_by(&mut sorted, |a, b| {
        let at = |run: &RunFacts| run.started.as_ref().map(|started| started.at.clone());
        match (at(a), at(b)) {
            (Some(x), Some(y)) if descending => y.cmp(&x),
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
        .then_with(|| a.run_id.cmp(&b.run_id))
    });
    sorted
}

/// The runs of an index as the header counts them: those holding cells (the run filter's values), and the
/// others by what they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunTally {
    /// Runs holding at least one cell (the run filter's values).
    pub with_cells: usize,
    /// Refill runs, whose rows stand in their master's cells.
    pub refills: usize,
    /// Copies of another run directory, set aside.
    pub copies: usize,
    /// Other runs without a cell of their own.
    pub empty: usize,
}

impl RunTally {
    /// Counts the runs of `index`.
    pub fn of(index: &IndexBody) -> RunTally {
        let holding: Vec<String> = index
            .dimensions
            .get(&Dimension::Run)
            .map(|values| values.iter().map(|count| count.value.to_string()).collect())
            .unwrap_or_default();
        let mut tally = RunTally {
            with_cells: holding.len(),
            ..RunTally::default()
        };
        for run in index
            .runs
            .iter()
            .filter(|run| !holding.contains(&run.run_id))
        {
            match run.role {
                RunRole::Refill => tally.refills += 1,
                RunRole::Copy => tally.copies += 1,
                RunRole::Run => tally.empty += 1,
            }
        }
        tally
    }

    /// What the runs without cells of their own are: `1 refill run spliced in`, `2 copies set aside`, …; empty
    /// when every run holds cells.
    pub fn others(&self) -> String {
        let plural = |count: usize, one: &str, many: &str| {
            format!("{count} {}", if count == 1 { one } else { many })
        };
        let mut parts = Vec::new();
        if self.refills > 0 {
            parts.push(plural(
                self.refills,
                "refill run spliced in",
                "refill runs spliced in",
            ));
        }
        if self.copies > 0 {
            parts.push(plural(self.copies, "copy set aside", "copies set aside"));
        }
        if self.empty > 0 {
            parts.push(plural(
                self.empty,
                "run without cells",
                "runs without cells",
            ));
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::CellKey;
    use crate::status::CellStatus;

    #[test]
    fn runs_sort_by_their_start_with_the_unknown_last() {
        let run = |id: &str, at: Option<&str>| RunFacts {
            run_id: id.to_string(),
            path: id.to_string(),
            role: RunRole::Run,
            refill_of: None,
            copy_of: None,
            manifest_status: None,
            has_plan: false,
            census: Default::default(),
            metrics: Default::default(),
            files: Vec::new(),
            refill: None,
            backups: Vec::new(),
            exclusions: Default::default(),
            suites: Vec::new(),
            environment: Default::default(),
            inferred: Vec::new(),
            started: at.map(|at| crate::api::RunStart::recorded(at.into(), "f", "k")),
        };
        let runs = [
            run("b", Some("2026-03-02T00:00:00Z")),
            run("none", None),
            run("a", Some("2026-03-01T00:00:00Z")),
            run("c", Some("2026-03-02T00:00:00Z")),
        ];
        let ids = |descending| -> Vec<&str> {
            by_start(&runs, descending)
                .iter()
                .map(|run| run.run_id.as_str())
                .collect()
        };
        assert_eq!(ids(false), ["a", "b", "c", "none"]);
        assert_eq!(ids(true), ["b", "c", "a", "none"]);
    }

    #[test]
    fn a_timestamped_id_gives_its_start_and_anything_else_none() {
        assert_eq!(
            started_from_id("20260612_204254_036590").as_deref(),
            Some("2026-06-12 20:42")
        );
        assert_eq!(
            started_from_id("20260612_2042").as_deref(),
            Some("2026-06-12 20:42")
        );
        assert_eq!(started_from_id("vllm_tp4"), None);
        assert_eq!(started_from_id("20261312_204254"), None, "month 13");
        assert_eq!(started_from_id("20260612-204254"), None);
        assert_eq!(started_from_id("2026"), None);
        assert_eq!(
            id_time("20260612_204254_036590").as_deref(),
            Some("2026-06-12T20:42:54Z")
        );
        assert_eq!(
            id_time("20260612_2042").as_deref(),
            Some("2026-06-12T20:42:00Z")
        );
        assert_eq!(id_time("20260612_204261"), None, "second 61");
    }

    #[test]
    fn a_label_names_the_backends_of_the_runs_cells_and_its_start() {
        let cell = |run: &str, backend: &str| {
            CellSummary::empty(
                CellKey {
                    run_id: run.into(),
                    suite: "s".into(),
                    phase: "p".into(),
                    backend: backend.into(),
                    model: "m".into(),
                    workload: "w".into(),
                    config: Default::default(),
                    load: crate::Load::Concurrency(1),
                    rep: 0,
                },
                CellStatus::Clean,
            )
        };
        let cells = [
            cell("20260612_204254_036590", "vllm"),
            cell("20260612_204254_036590", "vllm"),
            cell("sweep", "sglang"),
            cell("sweep", "vllm"),
        ];
        assert_eq!(
            run_label("20260612_204254_036590", &cells),
            "vllm · 2026-06-12 20:42"
        );
        assert_eq!(run_label("sweep", &cells), "sglang, vllm");
        assert_eq!(run_label("nothing", &cells), "");
    }
}
