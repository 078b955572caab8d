//! The query's parameters as command-line flags: each endpoint's parameters, named as links and the API name
//! them, with the words `--help` shows. The CLI declares its query flags from this table and hands what was typed
//! to the one parser ([`super::Query::from_pairs`]), so a flag means what the parameter means and is refused for
//! the same reason.

use super::{ALIASES, Endpoint};

/// One flag of an endpoint's query on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flag {
    /// The parameter's name, which is the flag's (`--backend`).
    pub name: &'static str,
    /// Another name the parameter is taken under (`--n` for `--load`).
    pub alias: Option<&'static str>,
    /// What the help names its value.
    pub value_name: &'static str,
    /// The help line.
    pub help: &'static str,
    /// Whether its value names a dimension (`--by`, `--per`), which may be a deployment parameter the data, read
    /// after the flags, states.
    pub names_dimension: bool,
}

/// The flag taking a deployment parameter's filter, `--param NAME=VALUES`: on the command line a parameter has no
/// flag of its own, since the data that names it is read after the flags.
pub const PARAM_FLAG: Flag = Flag {
    name: "param",
    alias: None,
    value_name: "NAME=VALUES",
    help: "Only cells whose deployment parameter NAME has one of VALUES (tp=4,8); repeat for more parameters",
    names_dimension: false,
};

impl Endpoint {
    /// The flags of the endpoint's query: every parameter it takes but `at` (the command line reads the data as
    /// it is now) and `format` (a command names its own output format), in the order the query writes them.
    pub fn flags(self) -> Vec<Flag> {
        self.parameters()
            .iter()
            .filter(|name| !matches!(**name, "at" | "format"))
            .map(|name| {
                let (value_name, help) = words(name);
                Flag {
                    name,
                    alias: ALIASES
                        .iter()
                        .find(|(_, canonical)| canonical == name)
                        .map(|(alias, _)| *alias),
                    value_name,
                    help,
                    names_dimension: matches!(*name, "by" | "per"),
                }
            })
            .collect()
    }
}

/// A parameter's value name and help line.
fn words(name: &str) -> (&'static str, &'static str) {
    match name {
        "run" => (
            "RUNS",
            "Only cells of these runs (comma-separated, as every list)",
        ),
        "suite" => ("SUITES", "Only cells of these suites"),
        "phase" => ("PHASES", "Only cells of these phases"),
        "backend" => ("BACKENDS", "Only cells of these backends"),
        "model" => ("MODELS", "Only cells of these models"),
        "workload" => ("WORKLOADS", "Only cells of these workloads"),
        "load" => (
            "LOADS",
            "Only cells at these loads: 16 (N=16 or 16 req/s), n=16, rate=2.5, rate=inf (also --n)",
        ),
        "rep" => ("REPS", "Only cells of these reps"),
        "status" => (
            "STATUSES",
            "Only cells of these statuses: clean, partial, failed, skipped, not_run",
        ),
        "include" => (
            "TOGGLES",
            "What-if toggles turned on: excluded, partial, pre_refill",
        ),
        "omit" => ("TOGGLES", "Defaults turned off: partial"),
        "cell" => (
            "KEY",
            "One cell by its key, run/suite/phase/backend/model/workload/n=N/rep=R (a load may be rate=R); or \
             name it by --run --phase --model --workload --load --rep",
        ),
        "by" => (
            "DIMENSION",
            "The dimension whose two values are compared: backend (default), model, workload, phase, run or a \
             deployment parameter",
        ),
        "a" => ("VALUE", "The first side: a value of --by"),
        "b" => ("VALUE", "The second side: a value of --by"),
        "per" => (
            "DIMENSION",
            "The dimension each group is one value of (default workload), or none",
        ),
        "metric" => (
            "METRIC",
            "The metric, as links name it (compare: default efficiency; history: default p50_ttft_ms)",
        ),
        "window" => (
            "RUNS",
            "Runs per window of the change-point method's split step (default 50)",
        ),
        "pvalue" => (
            "P",
            "The largest p-value a change point keeps (default 0.001)",
        ),
        "k" => (
            "RUNS",
            "Regressed: a change point toward worse within the last K runs, or the latest run worse than their band (default 10)",
        ),
        "tolerance" => (
            "BAND",
            "The band of the previous K runs: 4sd (mean ± 4 standard deviations, the default) or 5% (of the mean)",
        ),
        "since" => (
            "DATE",
            "Only runs that started at or after DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)",
        ),
        "slo" => (
            "SLO",
            "The SLO of metric slo_capacity: bounds such as p99_ttft_ms<=2000,p99_tpot_ms<=100, or a preset",
        ),
        "alpha" => (
            "ALPHA",
            "The significance level of the Holm-adjusted p (default 0.05)",
        ),
        _ => ("VALUE", ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_of_every_endpoint_says_what_it_takes() {
        for endpoint in Endpoint::ALL {
            for flag in endpoint.flags() {
                assert!(!flag.help.is_empty(), "{} has no help", flag.name);
                assert!(endpoint.parameters().contains(&flag.name));
            }
        }
        let names = |endpoint: Endpoint| -> Vec<&str> {
            endpoint.flags().iter().map(|flag| flag.name).collect()
        };
        assert_eq!(
            names(Endpoint::Cells),
            [
                "run", "suite", "phase", "backend", "model", "workload", "load", "rep", "status",
                "include", "omit"
            ]
        );
        assert_eq!(names(Endpoint::Requests)[0], "cell");
        assert_eq!(
            names(Endpoint::Compare)[..7],
            ["by", "a", "b", "per", "metric", "slo", "alpha"]
        );
        let load = Endpoint::Cells
            .flags()
            .into_iter()
            .find(|flag| flag.name == "load");
        assert_eq!(load.and_then(|flag| flag.alias), Some("n"));
    }
}
