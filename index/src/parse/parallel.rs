//! The per-request parallel arrays that vLLM's and SGLang's result objects share (`ttfts`, `itls`,
//! `latencies`, `input_lens`, `output_lens`, `start_times`, `errors`; times in seconds), read into
//! [`Request`]s, and the aggregate keys both write (`mean_ttft_ms`, `p99_e2el_ms`, …) read as reported figures.
//!
//! The arrays are read into [`Columns`] of plain numbers: straight from the file's bytes for vLLM
//! ([`ResultObject`], no JSON tree is built for the million-element arrays of a `--save-detailed` sweep), or from an already parsed object
//! ([`Columns::from_json`], SGLang's lines). Either way the same [`Arrays`] turn them into requests.

use super::json::{self, field_number, number, number_text};
use crate::run::record::{Part, Request, RunRecord};
use cellscope_model::api::Warning;
use cellscope_model::stat::Stat;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::fmt;

/// One per-request array of a result object, as found.
#[derive(Debug, Default)]
pub(crate) enum Column<T> {
    /// The key is not in the object.
    #[default]
    Missing,
    /// `null`.
    Null,
    Values(Vec<T>),
    /// Present but neither an array nor `null`.
    NotAnArray,
}

impl<T> Column<T> {
    fn from_json(value: Option<&Json>, element: impl Fn(&Json) -> T) -> Column<T> {
        match value {
            None => Column::Missing,
            Some(Json::Null) => Column::Null,
            Some(Json::Array(values)) => Column::Values(values.iter().map(element).collect()),
            Some(_) => Column::NotAnArray,
        }
    }

    fn values(self) -> Option<Vec<T>> {
        match self {
            Column::Values(values) => Some(values),
            _ => None,
        }
    }

    fn len(&self) -> Option<usize> {
        match self {
            Column::Values(values) => Some(values.len()),
            _ => None,
        }
    }
}

/// The per-request arrays of one result object, each value already a number: `None` where the file's value is
/// not one. `itls` holds each request's inter-token gaps, the numbers among them in order (`None` where the entry
/// is not an array);
/// `errors` each request's error text when it is a non-empty string.
#[derive(Debug, Default)]
pub(crate) struct Columns {
    pub(crate) latencies: Column<Option<f64>>,
    pub(crate) ttfts: Column<Option<f64>>,
    pub(crate) itls: Column<Option<Vec<f64>>>,
    pub(crate) input_lens: Column<Option<f64>>,
    pub(crate) output_lens: Column<Option<f64>>,
    pub(crate) start_times: Column<Option<f64>>,
    pub(crate) errors: Column<Option<String>>,
}

/// Why the arrays of an object cannot be used.
pub(crate) enum ArraysProblem {
    /// `key` is present but is not an array.
    NotAnArray(&'static str),
    /// The arrays disagree on the number of requests.
    Lengths(Vec<(&'static str, usize)>),
}

impl ArraysProblem {
    pub(crate) fn message(&self) -> String {
        match self {
            ArraysProblem::NotAnArray(key) => {
                format!("`{key}` is not an array of per-request values")
            }
            ArraysProblem::Lengths(lengths) => format!(
                "the per-request arrays have different lengths ({})",
                lengths
                    .iter()
                    .map(|(key, length)| format!("{key}: {length}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// The sum of a request's inter-token gaps, added in the file's order from the same start as `Iterator::sum`.
fn gap_sum(gaps: impl Iterator<Item = f64>) -> f64 {
    gaps.sum()
}

impl Columns {
    /// The arrays of a parsed result object.
    pub(crate) fn from_json(object: &Json) -> Columns {
        let numbers = |key: &str| Column::from_json(object.get(key), number);
        Columns {
            latencies: numbers("latencies"),
            ttfts: numbers("ttfts"),
            itls: Column::from_json(object.get("itls"), |gaps| {
                gaps.as_array()
                    .map(|gaps| gaps.iter().filter_map(number).collect())
            }),
            input_lens: numbers("input_lens"),
            output_lens: numbers("output_lens"),
            start_times: numbers("start_times"),
            errors: Column::from_json(object.get("errors"), |error| {
                error
                    .as_str()
                    .filter(|text| !text.is_empty())
                    .map(str::to_string)
            }),
        }
    }

    /// Whether the object has an `errors` key (even `null`).
    pub(crate) fn has_errors_key(&self) -> bool {
        !matches!(self.errors, Column::Missing)
    }

    /// The arrays, checked; `Ok(None)` when the object has none (an aggregate-only result).
    pub(crate) fn arrays(self) -> Result<Option<Arrays>, ArraysProblem> {
        // In the order the keys are checked (and the first one that is not an array named).
        let shapes: [(&'static str, Option<usize>, bool); 7] = [
            (
                "latencies",
                self.latencies.len(),
                matches!(self.latencies, Column::NotAnArray),
            ),
            (
                "ttfts",
                self.ttfts.len(),
                matches!(self.ttfts, Column::NotAnArray),
            ),
            (
                "itls",
                self.itls.len(),
                matches!(self.itls, Column::NotAnArray),
            ),
            (
                "input_lens",
                self.input_lens.len(),
                matches!(self.input_lens, Column::NotAnArray),
            ),
            (
                "output_lens",
                self.output_lens.len(),
                matches!(self.output_lens, Column::NotAnArray),
            ),
            (
                "start_times",
                self.start_times.len(),
                matches!(self.start_times, Column::NotAnArray),
            ),
            (
                "errors",
                self.errors.len(),
                matches!(self.errors, Column::NotAnArray),
            ),
        ];
        if let Some((key, _, _)) = shapes.iter().find(|(_, _, not_an_array)| *not_an_array) {
            return Err(ArraysProblem::NotAnArray(key));
        }
        // `latencies` and `queue_times` alone (vLLM without --save-detailed) still give wall latencies.
        if self.latencies.len().is_none() && self.ttfts.len().is_none() {
            return Ok(None);
        }
        // By key name, as they are listed when they disagree.
        let lengths: BTreeMap<&'static str, usize> = shapes
            .iter()
            .filter_map(|(key, length, _)| Some((*key, (*length)?)))
            .collect();
        let lengths: Vec<(&'static str, usize)> = lengths.into_iter().collect();
        let count = lengths[0].1;
        if lengths.iter().any(|(_, length)| *length != count) {
            return Err(ArraysProblem::Lengths(lengths));
        }
        Ok(Some(Arrays {
            count,
            latencies: self.latencies.values(),
            ttfts: self.ttfts.values(),
            itls: self.itls.values(),
            input_lens: self.input_lens.values(),
            output_lens: self.output_lens.values(),
            start_times: self.start_times.values(),
            errors: self.errors.values(),
        }))
    }
}

/// The arrays of a parsed result object, checked; `Ok(None)` when it has none (an aggregate-only result).
pub(crate) fn arrays(object: &Json) -> Result<Option<Arrays>, ArraysProblem> {
    Columns::from_json(object).arrays()
}

/// The arrays found in one result object, all of `count` requests.
pub(crate) struct Arrays {
    pub count: usize,
    latencies: Option<Vec<Option<f64>>>,
    ttfts: Option<Vec<Option<f64>>>,
    itls: Option<Vec<Option<Vec<f64>>>>,
    input_lens: Option<Vec<Option<f64>>>,
    output_lens: Option<Vec<Option<f64>>>,
    start_times: Option<Vec<Option<f64>>>,
    errors: Option<Vec<Option<String>>>,
}

impl Arrays {
    /// Whether wall latency has to be rebuilt as TTFT + Σ ITL (no `latencies` array).
    pub(crate) fn wall_derived(&self) -> bool {
        self.latencies.is_none() && self.ttfts.is_some() && self.itls.is_some()
    }

    /// The requests, in cellscope's units. A request fails when its error text is non-empty; without an
    /// `errors` array, a latency of exactly 0.0 is how vLLM marks a failed request.
    pub(crate) fn requests(mut self) -> Vec<Request> {
        let at = |values: &Option<Vec<Option<f64>>>, index: usize| -> Option<f64> {
            values.as_ref().and_then(|values| values[index])
        };
        let mut errors = self.errors.take().map(Vec::into_iter);
        let mut itls = self.itls.take().map(Vec::into_iter);
        (0..self.count)
            .map(|index| {
                let ttft_s = at(&self.ttfts, index);
                let gaps_s = itls.as_mut().and_then(|itls| itls.next().flatten());
                let itl_sum_s = gaps_s.as_ref().map(|gaps| gap_sum(gaps.iter().copied()));
                let latency_s = at(&self.latencies, index);
                let wall_s = match (latency_s, ttft_s, itl_sum_s) {
                    (Some(latency), _, _) => Some(latency),
                    (None, Some(ttft), Some(gaps)) => Some(ttft + gaps),
                    _ => None,
                };
                let error = match errors.as_mut() {
                    Some(errors) => errors.next().flatten(),
                    None if latency_s == Some(0.0) => {
                        Some("latency 0.0 (how the tool marks a failed request)".to_string())
                    }
                    None => None,
                };
                let start_s = at(&self.start_times, index);
                Request {
                    wall_ms: wall_s.map(|seconds| seconds * 1000.0),
                    ttft_ms: ttft_s.map(|seconds| seconds * 1000.0),
                    itl_ms: gaps_s.map(|gaps| gaps.iter().map(|gap| gap * 1000.0).collect()),
                    prompt_tokens: at(&self.input_lens, index),
                    completion_tokens: at(&self.output_lens, index),
                    start_s: start_s.filter(|_| latency_s.is_some()),
                    end_s: start_s
                        .zip(latency_s)
                        .map(|(start, latency)| start + latency),
                    error,
                }
            })
            .collect()
    }
}

/// A vLLM result object read straight from its text: the per-request arrays into [`Columns`], every other key
/// into `fields` (an object, for the mapping's `{field}` templates and the scalar fields the reader looks up).
/// `generated_texts` and `queue_times` are skipped unread. A document that is not an object is read whole and
/// left with `is_object` false, so the reader can say so.
pub(crate) struct ResultObject {
    pub fields: Json,
    pub columns: Columns,
    pub is_object: bool,
}

impl ResultObject {
    fn other() -> ResultObject {
        ResultObject {
            fields: Json::Null,
            columns: Columns::default(),
            is_object: false,
        }
    }
}

impl<'de> de::Deserialize<'de> for ResultObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ResultVisitor)
    }
}

/// Skips the rest of a sequence or map that is read only to be passed over.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

struct ResultVisitor;

impl<'de> Visitor<'de> for ResultVisitor {
    type Value = ResultObject;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ResultObject, A::Error> {
        let mut fields = serde_json::Map::new();
        let mut columns = Columns::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "latencies" => columns.latencies = map.next_value_seed(ColumnOf(Lenient))?,
                "ttfts" => columns.ttfts = map.next_value_seed(ColumnOf(Lenient))?,
                "itls" => columns.itls = map.next_value_seed(ColumnOf(Gaps))?,
                "input_lens" => columns.input_lens = map.next_value_seed(ColumnOf(Lenient))?,
                "output_lens" => columns.output_lens = map.next_value_seed(ColumnOf(Lenient))?,
                "start_times" => columns.start_times = map.next_value_seed(ColumnOf(Lenient))?,
                "errors" => columns.errors = map.next_value_seed(ColumnOf(ErrorText))?,
                "generated_texts" | "queue_times" => {
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    let value: Json = map.next_value()?;
                    fields.insert(key, value);
                }
            }
        }
        Ok(ResultObject {
            fields: Json::Object(fields),
            columns,
            is_object: true,
        })
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<ResultObject, E> {
        Ok(ResultObject::other())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<ResultObject, E> {
        Ok(ResultObject::other())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<ResultObject, E> {
        Ok(ResultObject::other())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<ResultObject, E> {
        Ok(ResultObject::other())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<ResultObject, E> {
        Ok(ResultObject::other())
    }
    fn visit_unit<E: de::Error>(self) -> Result<ResultObject, E> {
        Ok(ResultObject::other())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ResultObject, A::Error> {
        skip_seq(seq)?;
        Ok(ResultObject::other())
    }
}

/// How one element of a per-request array is read.
trait Element: Copy {
    type Value;
    fn read<'de, D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error>;
}

/// A whole per-request array of `E` elements (or `null`, or something else, noted).
struct ColumnOf<E>(E);

impl<'de, E: Element> DeserializeSeed<'de> for ColumnOf<E> {
    type Value = Column<E::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, E: Element> Visitor<'de> for ColumnOf<E> {
    type Value = Column<E::Value>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an array of per-request values")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut values = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(value) = seq.next_element_seed(ElementSeed(self.0))? {
            values.push(value);
        }
        Ok(Column::Values(values))
    }

    fn visit_unit<E2: de::Error>(self) -> Result<Self::Value, E2> {
        Ok(Column::Null)
    }

    fn visit_bool<E2: de::Error>(self, _: bool) -> Result<Self::Value, E2> {
        Ok(Column::NotAnArray)
    }
    fn visit_i64<E2: de::Error>(self, _: i64) -> Result<Self::Value, E2> {
        Ok(Column::NotAnArray)
    }
    fn visit_u64<E2: de::Error>(self, _: u64) -> Result<Self::Value, E2> {
        Ok(Column::NotAnArray)
    }
    fn visit_f64<E2: de::Error>(self, _: f64) -> Result<Self::Value, E2> {
        Ok(Column::NotAnArray)
    }
    fn visit_str<E2: de::Error>(self, _: &str) -> Result<Self::Value, E2> {
        Ok(Column::NotAnArray)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        skip_map(map)?;
        Ok(Column::NotAnArray)
    }
}

struct ElementSeed<E>(E);

impl<'de, E: Element> DeserializeSeed<'de> for ElementSeed<E> {
    type Value = E::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<E::Value, D::Error> {
        self.0.read(deserializer)
    }
}

/// A number as [`number`] reads one: also from a string (`"550"`, `"inf"`, `"NaN"`); `None` for anything else.
#[derive(Clone, Copy)]
struct Lenient;

impl Element for Lenient {
    type Value = Option<f64>;
    fn read<'de, D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<f64>, D::Error> {
        deserializer.deserialize_any(LenientVisitor)
    }
}

struct LenientVisitor;

impl<'de> Visitor<'de> for LenientVisitor {
    type Value = Option<f64>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a number")
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Option<f64>, E> {
        Ok(Some(value))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Option<f64>, E> {
        Ok(Some(value as f64))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Option<f64>, E> {
        Ok(Some(value as f64))
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Option<f64>, E> {
        Ok(number_text(value))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<f64>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<f64>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<f64>, A::Error> {
        skip_seq(seq)?;
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<f64>, A::Error> {
        skip_map(map)?;
        Ok(None)
    }
}

/// One request's inter-token gaps (the numbers among them, in order); `None` when the entry is not an array.
#[derive(Clone, Copy)]
struct Gaps;

impl Element for Gaps {
    type Value = Option<Vec<f64>>;
    fn read<'de, D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Option<Vec<f64>>, D::Error> {
        deserializer.deserialize_any(GapsVisitor)
    }
}

struct GapsVisitor;

impl<'de> Visitor<'de> for GapsVisitor {
    type Value = Option<Vec<f64>>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an array of inter-token latencies")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Vec<f64>>, A::Error> {
        let mut gaps = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(gap) = seq.next_element_seed(ElementSeed(Lenient))? {
            gaps.extend(gap);
        }
        Ok(Some(gaps))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<Vec<f64>>, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<Vec<f64>>, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<Vec<f64>>, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<Vec<f64>>, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<Vec<f64>>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<Vec<f64>>, E> {
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<Vec<f64>>, A::Error> {
        skip_map(map)?;
        Ok(None)
    }
}

/// One request's error text when it is a non-empty string.
#[derive(Clone, Copy)]
struct ErrorText;

impl Element for ErrorText {
    type Value = Option<String>;
    fn read<'de, D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<String>, D::Error> {
        deserializer.deserialize_any(ErrorTextVisitor)
    }
}

struct ErrorTextVisitor;

impl<'de> Visitor<'de> for ErrorTextVisitor {
    type Value = Option<String>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an error text")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Option<String>, E> {
        Ok((!value.is_empty()).then(|| value.to_string()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Option<String>, E> {
        Ok((!value.is_empty()).then_some(value))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<String>, A::Error> {
        skip_seq(seq)?;
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<String>, A::Error> {
        skip_map(map)?;
        Ok(None)
    }
}

/// The concurrency a result object states in `max_concurrency` (`None` when absent or null); `Err` when it is
/// not a whole number of at least 1.
pub(crate) fn max_concurrency(object: &Json) -> Result<Option<Part>, String> {
    match object.get("max_concurrency") {
        None | Some(Json::Null) => Ok(None),
        Some(value) => match json::number(value) {
            Some(n) if n.fract() == 0.0 && n >= 1.0 => Ok(Part::read(
                (n as u64).to_string(),
                "field `max_concurrency`",
            )),
            _ => Err(format!("`max_concurrency` is not a whole number: {value}")),
        },
    }
}

/// What a vLLM and an SGLang result object's record share: where it is, its fields, and the tool's duration and
/// figures.
pub(crate) fn result_record(object: &Json, index: u32, line: u64) -> RunRecord {
    RunRecord {
        record: index,
        line: Some(line),
        fields: object.clone(),
        duration_s: field_number(object, "duration"),
        reported: reported(object),
        environment: engine_version(object),
        ..RunRecord::default()
    }
}

/// The engine's version an SGLang result's `server_info` (the server's own `/server_info` answer) records.
fn engine_version(
    object: &Json,
) -> std::collections::BTreeMap<cellscope_model::api::EnvironmentField, String> {
    crate::parse::json::at(object, "server_info.version")
        .and_then(Json::as_str)
        .map(|version| {
            (
                cellscope_model::api::EnvironmentField::BackendVersion,
                version.to_string(),
            )
        })
        .into_iter()
        .collect()
}

/// Keeps a result object's record, or warns at its line that the object `label` names is left out (the file's
/// other objects are still read).
pub(crate) fn keep(
    records: &mut Vec<RunRecord>,
    parsed: Result<RunRecord, String>,
    label: &str,
    (path, line): (&str, u64),
    warnings: &mut Vec<Warning>,
) {
    match parsed {
        Ok(record) => records.push(record),
        Err(message) => warnings.push(
            Warning::error(
                "invalid_result",
                format!("{label}: {message}; it is left out"),
            )
            .file(path)
            .line(line),
        ),
    }
}

/// The tool's aggregates as cells-table columns: `(column, keys to try in order)`. vLLM's end-to-end latency
/// is `*_e2el_ms` (older files `*_latency_ms`), SGLang's `*_e2e_latency_ms`.
const REPORTED: [(Stat, &[&str]); 18] = [
    (
        Stat::MeanWallMs,
        &["mean_e2el_ms", "mean_e2e_latency_ms", "mean_latency_ms"],
    ),
    (
        Stat::P50WallMs,
        &[
            "median_e2el_ms",
            "median_e2e_latency_ms",
            "median_latency_ms",
        ],
    ),
    (
        Stat::P95WallMs,
        &["p95_e2el_ms", "p95_e2e_latency_ms", "p95_latency_ms"],
    ),
    (
        Stat::P99WallMs,
        &["p99_e2el_ms", "p99_e2e_latency_ms", "p99_latency_ms"],
    ),
    (Stat::P50TtftMs, &["median_ttft_ms"]),
    (Stat::P95TtftMs, &["p95_ttft_ms"]),
    (Stat::MeanTtftMs, &["mean_ttft_ms"]),
    (Stat::P99TtftMs, &["p99_ttft_ms"]),
    (Stat::MeanTpotMs, &["mean_tpot_ms"]),
    (Stat::P50TpotMs, &["median_tpot_ms"]),
    (Stat::P95TpotMs, &["p95_tpot_ms"]),
    (Stat::P99TpotMs, &["p99_tpot_ms"]),
    (Stat::MeanItlMs, &["mean_itl_ms"]),
    (Stat::P50ItlMs, &["median_itl_ms"]),
    (Stat::P95ItlMs, &["p95_itl_ms"]),
    (Stat::P99ItlMs, &["p99_itl_ms"]),
    (Stat::TotalTps, &["total_token_throughput"]),
    (Stat::RequestThroughputRps, &["request_throughput"]),
];

/// The reported aggregates of a vLLM or SGLang result object, by cells-table column. Means of tokens are the
/// totals over the completed requests; throughput is the tool's `output_throughput` (its output tokens over its
/// duration, the same definition cellscope uses when requests carry no timestamps).
pub(crate) fn reported(object: &Json) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (column, keys) in REPORTED {
        if let Some(value) = keys.iter().find_map(|key| field_number(object, key)) {
            out.insert(column.name().to_string(), value);
        }
    }
    if let Some(value) = field_number(object, "output_throughput") {
        out.insert(Stat::AggregateTps.name().to_string(), value);
    }
    if let Some(completed) = field_number(object, "completed").filter(|count| *count > 0.0) {
        for (column, key) in [
            (Stat::MeanPromptTokens, "total_input_tokens"),
            (Stat::MeanCompletionTokens, "total_output_tokens"),
        ] {
            if let Some(total) = field_number(object, key) {
                out.insert(column.name().to_string(), total / completed);
            }
        }
    }
    out
}
