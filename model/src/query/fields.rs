//! The parameters every surface shares, declared once: the compare choices (`by`, `a`, `b`, `per`, `alpha`),
//! `metric`, the dimension filters and the load range, `cell`, the what-if toggles (`include`, `omit`, `lineage`)
//! and `at`. The app's view state and the typed [`Query`] both read and write them through these functions, so
//! a parameter means the same on every surface and a bad value gets the same reason.

use super::codec::{Field, decode, encode, list_items, list_value};
use super::toggles::{Include, WhatIf};
use super::{CONTRASTABLE, CompareChoice, Format, Query};
use crate::filter::{DimensionFilter, LoadBound, is_valid_value, is_whole_number};
use crate::key::{CellKey, Dimension};
use crate::metric::Metric;
use crate::status::CellStatus;

/// What the shared fields read and write: the parts a view state and a query have in common.
pub(crate) trait Target {
    /// Whether `load=` (or `n=`) takes exact load values (the API and the CLI) rather than being refused for
    /// `load_min`/`load_max` (a link, whose filter bar chooses the load as a range).
    const EXACT_N: bool;
    fn filter(&self) -> &DimensionFilter;
    fn filter_mut(&mut self) -> &mut DimensionFilter;
    fn what_if(&self) -> &WhatIf;
    fn what_if_mut(&mut self) -> &mut WhatIf;
    fn compare(&self) -> &CompareChoice;
    fn compare_mut(&mut self) -> &mut CompareChoice;
    fn metric(&self) -> Metric;
    fn metric_mut(&mut self) -> &mut Metric;
    fn cell(&self) -> &Option<CellKey>;
    fn cell_mut(&mut self) -> &mut Option<CellKey>;
    fn at(&self) -> &Option<String>;
    fn at_mut(&mut self) -> &mut Option<String>;
    fn slo(&self) -> &String;
    fn slo_mut(&mut self) -> &mut String;
    fn history(&self) -> &crate::history::HistoryChoice;
    fn history_mut(&mut self) -> &mut crate::history::HistoryChoice;
    /// Whether the compare choices and the metric are written even at their defaults (a Compare view's link
    /// reads as the question it asks).
    fn compare_shown(&self) -> bool;
}

/// Implements [`Target`]'s accessors for a struct with fields `filter`, `what_if`, `compare`, `metric`, `cell`,
/// `at`, `slo` and `history`.
macro_rules! target_accessors {
    () => {
        fn filter(&self) -> &crate::filter::DimensionFilter {
            &self.filter
        }
        fn filter_mut(&mut self) -> &mut crate::filter::DimensionFilter {
            &mut self.filter
        }
        fn what_if(&self) -> &crate::query::WhatIf {
            &self.what_if
        }
        fn what_if_mut(&mut self) -> &mut crate::query::WhatIf {
            &mut self.what_if
        }
        fn compare(&self) -> &crate::query::CompareChoice {
            &self.compare
        }
        fn compare_mut(&mut self) -> &mut crate::query::CompareChoice {
            &mut self.compare
        }
        fn metric(&self) -> crate::metric::Metric {
            self.metric
        }
        fn metric_mut(&mut self) -> &mut crate::metric::Metric {
            &mut self.metric
        }
        fn cell(&self) -> &Option<crate::key::CellKey> {
            &self.cell
        }
        fn cell_mut(&mut self) -> &mut Option<crate::key::CellKey> {
            &mut self.cell
        }
        fn at(&self) -> &Option<String> {
            &self.at
        }
        fn at_mut(&mut self) -> &mut Option<String> {
            &mut self.at
        }
        fn slo(&self) -> &String {
            &self.slo
        }
        fn slo_mut(&mut self) -> &mut String {
            &mut self.slo
        }
        fn history(&self) -> &crate::history::HistoryChoice {
            &self.history
        }
        fn history_mut(&mut self) -> &mut crate::history::HistoryChoice {
            &mut self.history
        }
    };
}
pub(crate) use target_accessors;

/// `expected one of a, b, c` over some names.
fn one_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    format!(
        "expected one of {}",
        names.into_iter().collect::<Vec<_>>().join(", ")
    )
}

/// Reads a dimension by its name, an alias (`n` in older links for the load) or a deployment parameter's name,
/// or says which names there are.
pub(crate) fn dimension(text: &str) -> Result<Dimension, String> {
    Dimension::parse(text).ok_or_else(|| one_of(Dimension::ALL.map(Dimension::name)))
}

/// Reads a dimension a comparison can contrast (`by`), or says which.
pub(crate) fn contrastable(text: &str) -> Result<Dimension, String> {
    Dimension::parse(text)
        .filter(|dimension| crate::query::is_contrastable(*dimension))
        .ok_or_else(|| one_of(CONTRASTABLE.map(Dimension::name)))
}

/// Reads the dimension a comparison groups by (`per`), `none` for one group, or says which.
pub(crate) fn group(text: &str) -> Result<Option<Dimension>, String> {
    if text == "none" {
        return Ok(None);
    }
    contrastable(text)
        .map(Some)
        .map_err(|reason| format!("{reason} or none"))
}

/// The compare choices: `by`, `a`, `b`, `per`. A Compare view's link names every one, defaults included, so
/// that it reads as the question it asks (`view=compare&by=backend&a=vllm&b=sglang&per=workload&metric=…`).
pub(crate) const fn sides<T: Target>() -> Field<T> {
    Field {
        print: |target, out| {
            let choice = target.compare();
            let default = &CompareChoice::DEFAULT;
            let shown = target.compare_shown();
            if shown || choice.by != default.by {
                out.push(("by", choice.by.name().to_string()));
            }
            for (name, side) in [("a", &choice.a), ("b", &choice.b)] {
                if let Some(value) = side {
                    out.push((name, encode(value, false)));
                }
            }
            if shown || choice.per != default.per {
                out.push((
                    "per",
                    choice.per.map_or("none", Dimension::name).to_string(),
                ));
            }
        },
        parse: |target, params| {
            if let Some(text) = params.take("by") {
                match contrastable(&text) {
                    Ok(by) => target.compare_mut().by = by,
                    Err(reason) => params.ignore("by", &text, reason),
                }
            }
            for name in ["a", "b"] {
                if let Some(text) = params.take(name) {
                    let value = text.trim().to_string();
                    let choice = target.compare_mut();
                    if value.is_empty() {
                        params.ignore(name, &text, "expected a value of the compared dimension");
                    } else if name == "a" {
                        choice.a = Some(value);
                    } else {
                        choice.b = Some(value);
                    }
                }
            }
            if let Some(text) = params.take("per") {
                match group(&text) {
                    Ok(per) => target.compare_mut().per = per,
                    Err(reason) => params.ignore("per", &text, reason),
                }
            }
        },
    }
}

/// `metric`: what the views plot and what a comparison compares.
pub(crate) const fn metric<T: Target>() -> Field<T> {
    Field {
        print: |target, out| {
            if target.compare_shown() || target.metric() != Metric::default() {
                out.push(("metric", target.metric().name().to_string()));
            }
        },
        parse: |target, params| {
            if let Some(text) = params.take("metric") {
                match Metric::parse(&text) {
                    Some(metric) => *target.metric_mut() = metric,
                    None => params.ignore("metric", &text, one_of(Metric::ALL.map(Metric::name))),
                }
            }
        },
    }
}

/// `slo`: the SLO capacity is judged by (bounds such as `p99_ttft_ms<=2000`, or a preset's name); empty is
/// the default SLO.
pub(crate) const fn slo<T: Target>() -> Field<T> {
    Field {
        print: |target, out| {
            if !target.slo().is_empty() {
                out.push(("slo", target.slo().clone()));
            }
        },
        parse: |target, params| {
            if let Some(text) = params.take("slo") {
                match crate::slo::Slo::from_link(text.trim()) {
                    Ok(_) => *target.slo_mut() = text.trim().to_string(),
                    Err(error) => params.ignore("slo", &text, error.to_string()),
                }
            }
        },
    }
}

/// `alpha`: the significance level of a comparison's verdict.
pub(crate) const fn alpha<T: Target>() -> Field<T> {
    Field {
        print: |target, out| {
            let alpha = target.compare().alpha;
            if target.compare_shown() || alpha != CompareChoice::DEFAULT.alpha {
                out.push(("alpha", alpha.to_string()));
            }
        },
        parse: |target, params| {
            if let Some(text) = params.take("alpha") {
                match text.trim().parse::<f64>() {
                    Ok(alpha) if alpha > 0.0 && alpha < 1.0 => target.compare_mut().alpha = alpha,
                    _ => params.ignore("alpha", &text, "expected a number between 0 and 1"),
                }
            }
        },
    }
}

/// One parameter per filtered dimension with comma-separated values; a dimension given twice adds up. The load
/// takes exact values only where the target says so ([`Target::EXACT_N`]).
pub(crate) const fn dimensions<T: Target>() -> Field<T> {
    Field {
        print: |target, out| {
            for (dimension, values) in &target.filter().values {
                out.push((dimension.name(), list_value(values)));
            }
        },
        parse: |target, params| {
            let taken = Dimension::ALL
                .into_iter()
                .filter(|dimension| dimension.is_filterable() || T::EXACT_N);
            for dimension in taken {
                let name = dimension.name();
                let mut accepted = Vec::new();
                let mut given = params.take_all(name);
                if dimension == Dimension::Load {
                    // `n` is the load's name in older links and API calls.
                    given.extend(params.take_all("n"));
                }
                for raw in given {
                    for item in list_items(&raw) {
                        if !is_valid_value(dimension, &item) {
                            let reason = if dimension == Dimension::Load {
                                "expected loads (16, 2.5, n=16, rate=2.5, rate=inf)"
                            } else {
                                "expected whole numbers"
                            };
                            params.ignore(name, &item, reason);
                        } else {
                            accepted.push(item);
                        }
                    }
                }
                // Checked above, so this cannot fail.
                let _ = target.filter_mut().accept(dimension, accepted);
            }
            for name in [Dimension::Load.name(), "n"] {
                for raw in params.take_all(name) {
                    params.ignore(
                        name,
                        &decode(&raw),
                        "the load is chosen with load_min and load_max",
                    );
                }
            }
        },
    }
}

/// The deployment parameters as filters (`tp=4,8`, any spelling of a well-known parameter or the name of one
/// the data has), written by [`dimensions`] with the others. Taken after every other field, so that a parameter
/// of the query keeps its meaning whatever a deployment parameter is called.
pub(crate) const fn params<T: Target>() -> Field<T> {
    Field {
        print: |_, _| {},
        parse: |target, params| {
            let names: Vec<String> = params.pairs.iter().map(|(name, _)| name.clone()).collect();
            for name in names {
                let Some(dimension) = Dimension::parse(&name).filter(|found| found.is_param())
                else {
                    continue;
                };
                let accepted: Vec<String> = params
                    .take_all(&name)
                    .iter()
                    .flat_map(|raw| list_items(raw))
                    .collect();
                // Text dimensions take any value, so this cannot fail.
                let _ = target.filter_mut().accept(dimension, accepted);
            }
        },
    }
}

/// A whole number from 1, or why not.
pub(crate) fn whole_number(text: &str) -> Result<u32, String> {
    let text = text.trim();
    if is_whole_number(text) && text != "0" && text.bytes().any(|byte| byte != b'0') {
        text.parse().map_err(|_| String::new())
    } else {
        Err("expected a whole number from 1".into())
    }
}

/// A load bound: a number above zero (`inf` included), or why not.
pub(crate) fn load_bound(text: &str) -> Result<LoadBound, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(LoadBound::new)
        .ok_or_else(|| "expected a number above zero".into())
}

/// `load_min`, `load_max`: the load range, each end optional; `n_min` and `n_max` (older links) are read as
/// the same ends, and a bound given under both names is the new name's.
pub(crate) const fn load_range<T: Target>() -> Field<T> {
    Field {
        print: |target, out| {
            let filter = target.filter();
            if let Some(low) = filter.load_min {
                out.push(("load_min", low.to_string()));
            }
            if let Some(high) = filter.load_max {
                out.push(("load_max", high.to_string()));
            }
        },
        parse: |target, params| {
            for (name, alias, is_min) in [("load_min", "n_min", true), ("load_max", "n_max", false)]
            {
                let old = params.take(alias).map(|text| (alias, text));
                let Some((name, text)) = params.take(name).map(|text| (name, text)).or(old) else {
                    continue;
                };
                let value = if text.trim().is_empty() {
                    Ok(None)
                } else {
                    load_bound(&text).map(Some)
                };
                let filter = target.filter_mut();
                match value {
                    Ok(value) if is_min => filter.load_min = value,
                    Ok(value) => filter.load_max = value,
                    Err(reason) => params.ignore(name, &text, reason),
                }
            }
        },
    }
}

/// `cell`: one cell by its key's text form ([`CellKey`]'s `Display`).
pub(crate) const fn cell<T: Target>() -> Field<T> {
    Field {
        print: |target, out| {
            if let Some(cell) = target.cell() {
                out.push(("cell", encode(&cell.to_string(), true)));
            }
        },
        parse: |target, params| {
            if let Some(text) = params.take("cell") {
                if text.is_empty() {
                    *target.cell_mut() = None;
                } else {
                    match text.parse::<CellKey>() {
                        Ok(cell) => *target.cell_mut() = Some(cell),
                        Err(error) => params.ignore("cell", &text, error.to_string()),
                    }
                }
            }
        },
    }
}

/// The reason a word is not a toggle of `include`.
fn include_reason() -> String {
    let names: Vec<&str> = Include::ALL.map(Include::name).into_iter().collect();
    format!(
        "expected {}, {} or {}",
        names.join(", "),
        Include::ALWAYS_IN[0],
        Include::ALWAYS_IN[1]
    )
}

/// The what-if toggles: `include` adds to the default set (partial cells are in by default, refilled cells
/// always are), `omit` takes the default `partial` out, and `lineage` is `include` under its older name.
pub(crate) const fn toggles<T: Target>() -> Field<T> {
    Field {
        print: |target, out| {
            let (included, omit_partial) = target.what_if().written();
            if !included.is_empty() {
                out.push(("include", included.join(",")));
            }
            if omit_partial {
                out.push(("omit", Include::Partial.name().to_string()));
            }
        },
        parse: |target, params| {
            for name in ["include", "lineage"] {
                for raw in params.take_all(name) {
                    for item in list_items(&raw) {
                        match Include::parse(&item) {
                            Some(include) => target.what_if_mut().set(include, true),
                            None if Include::ALWAYS_IN.contains(&item.as_str()) => {}
                            None => params.ignore(name, &item, include_reason()),
                        }
                    }
                }
            }
            for raw in params.take_all("omit") {
                for item in list_items(&raw) {
                    if item == Include::Partial.name() {
                        target.what_if_mut().partial = false;
                    } else {
                        params.ignore("omit", &item, "only partial cells can be omitted");
                    }
                }
            }
        },
    }
}

/// `at`: the snapshot a link was made for.
pub(crate) const fn at<T: Target>() -> Field<T> {
    Field {
        print: |target, out| {
            if let Some(at) = target.at() {
                out.push(("at", encode(at, true)));
            }
        },
        parse: |target, params| {
            if let Some(text) = params.take("at") {
                *target.at_mut() = (!text.is_empty()).then_some(text);
            }
        },
    }
}

/// `status`: the cell statuses `/api/cells` keeps.
fn status() -> Field<Query> {
    Field {
        print: |query, out| {
            if !query.status.is_empty() {
                let names: Vec<&str> = query.status.iter().map(|status| status.as_str()).collect();
                out.push(("status", names.join(",")));
            }
        },
        parse: |query, params| {
            for raw in params.take_all("status") {
                for item in list_items(&raw) {
                    match CellStatus::parse(&item) {
                        Some(status) if !query.status.contains(&status) => {
                            query.status.push(status)
                        }
                        Some(_) => {}
                        None => params.ignore(
                            "status",
                            &item,
                            one_of(CellStatus::ALL.map(CellStatus::as_str)),
                        ),
                    }
                }
            }
        },
    }
}

/// `format`: how a body is encoded.
fn format() -> Field<Query> {
    Field {
        print: |query, out| {
            if let Some(format) = query.format {
                out.push(("format", format.name().to_string()));
            }
        },
        parse: |query, params| {
            if let Some(text) = params.take("format") {
                match Format::parse(&text) {
                    Some(format) => query.format = Some(format),
                    None => params.ignore("format", &text, one_of(Format::ALL.map(Format::name))),
                }
            }
        },
    }
}

/// Every parameter of a [`Query`], in the order its text form writes them.
pub(crate) fn query_fields() -> [Field<Query>; 13] {
    [
        sides(),
        metric(),
        slo(),
        alpha(),
        dimensions(),
        load_range(),
        status(),
        cell(),
        toggles(),
        at(),
        format(),
        params(),
        history(),
    ]
}

/// `window`, `pvalue`, `k`, `tolerance`, `since`: a History's method and regression rule.
pub(crate) const fn history<T: Target>() -> Field<T> {
    Field {
        print: |target, out| out.extend(target.history().pairs()),
        parse: |target, params| {
            for name in crate::history::HistoryChoice::NAMES {
                if let Some(text) = params.take(name)
                    && let Err(reason) = target.history_mut().set(name, &text)
                {
                    params.ignore(name, &text, reason);
                }
            }
        },
    }
}
