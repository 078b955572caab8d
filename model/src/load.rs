//! The load a cell was measured at: a closed-loop concurrency N, an open-loop offered request rate, or unstated.
//!
//! Records at different loads are different cells, never reps of one cell; a record that states no load at all is
//! kept as [`Load::Unstated`] rather than dropped.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

/// An offered request rate in requests per second: finite and above zero, or `+inf` ("send everything at once",
/// vLLM's and SGLang's `--request-rate inf`, GuideLLM's throughput strategy).
#[derive(Clone, Copy, Debug)]
pub struct RateRps(f64);

impl RateRps {
    /// The rate `rps`; `None` for NaN, zero, a negative rate or `-inf`.
    pub fn new(rps: f64) -> Option<RateRps> {
        (rps > 0.0).then_some(RateRps(rps))
    }

    /// The rate as a number (`f64::INFINITY` for an unbounded rate).
    pub fn get(self) -> f64 {
        self.0
    }

    /// Whether the rate is unbounded.
    pub fn is_infinite(self) -> bool {
        self.0.is_infinite()
    }
}

impl PartialEq for RateRps {
    fn eq(&self, other: &RateRps) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for RateRps {}

impl Hash for RateRps {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

impl PartialOrd for RateRps {
    fn partial_cmp(&self, other: &RateRps) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RateRps {
    fn cmp(&self, other: &RateRps) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Rust's shortest round-trip form (`1`, `2.5`) and `inf`.
impl fmt::Display for RateRps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_infinite() {
            f.write_str("inf")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl FromStr for RateRps {
    type Err = LoadError;

    fn from_str(text: &str) -> Result<RateRps, LoadError> {
        let error = || LoadError {
            text: text.to_string(),
        };
        let trimmed = text.trim();
        let rps = match trimmed.to_ascii_lowercase().as_str() {
            "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
            _ => trimmed.parse::<f64>().map_err(|_| error())?,
        };
        RateRps::new(rps).ok_or_else(error)
    }
}

/// How a cell's load is stated; the three kinds are never put on one axis.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum LoadKind {
    /// A closed loop of N requests in flight.
    Concurrency,
    /// An open loop offering requests at a rate.
    Rate,
    /// The record states no load.
    Unstated,
}

impl LoadKind {
    /// Every kind, in load order.
    pub const ALL: [LoadKind; 3] = [LoadKind::Concurrency, LoadKind::Rate, LoadKind::Unstated];

    /// The label of an axis that carries loads of this kind.
    pub const fn axis_label(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "concurrency N",
            LoadKind::Rate => "offered rate (req/s)",
            LoadKind::Unstated => "load unstated",
        }
    }

    /// The short name links use (`kind=rate`).
    pub const fn name(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "concurrency",
            LoadKind::Rate => "rate",
            LoadKind::Unstated => "unstated",
        }
    }

    /// The kind named `name` (see [`LoadKind::name`]).
    pub fn parse(name: &str) -> Option<LoadKind> {
        LoadKind::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

/// The load of one cell. Ordered concurrency before rate before unstated, then by value (an unbounded rate last).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Load {
    /// Concurrency N (`n_agents` in TR164's metrics.csv, `max_concurrency` in vLLM's result).
    Concurrency(u32),
    /// An offered request rate.
    Rate(RateRps),
    /// The record states no load.
    Unstated,
}

impl Load {
    /// The offered rate `rps`, if it is a valid rate.
    pub fn rate(rps: f64) -> Option<Load> {
        RateRps::new(rps).map(Load::Rate)
    }

    /// The kind of load.
    pub fn kind(self) -> LoadKind {
        match self {
            Load::Concurrency(_) => LoadKind::Concurrency,
            Load::Rate(_) => LoadKind::Rate,
            Load::Unstated => LoadKind::Unstated,
        }
    }

    /// The load as a number on its kind's axis: N, the rate (`inf` for unbounded); `None` when unstated.
    pub fn value(self) -> Option<f64> {
        match self {
            Load::Concurrency(n) => Some(f64::from(n)),
            Load::Rate(rate) => Some(rate.get()),
            Load::Unstated => None,
        }
    }

    /// N of a concurrency load.
    pub fn concurrency(self) -> Option<u32> {
        match self {
            Load::Concurrency(n) => Some(n),
            _ => None,
        }
    }

    /// The offered rate of a rate load.
    pub fn rate_rps(self) -> Option<f64> {
        match self {
            Load::Rate(rate) => Some(rate.get()),
            _ => None,
        }
    }

    /// The label people read: `N=16`, `2.5 req/s`, `∞ req/s`, `load unstated`.
    pub fn label(self) -> String {
        match self {
            Load::Concurrency(n) => format!("N={n}"),
            Load::Rate(rate) if rate.is_infinite() => "∞ req/s".to_string(),
            Load::Rate(rate) => format!("{rate} req/s"),
            Load::Unstated => "load unstated".to_string(),
        }
    }

    /// The value alone as a table or tick shows it under its kind's axis label: `16`, `2.5`, `∞`, `–`.
    pub fn short_label(self) -> String {
        match self {
            Load::Concurrency(n) => n.to_string(),
            Load::Rate(rate) if rate.is_infinite() => "∞".to_string(),
            Load::Rate(rate) => rate.to_string(),
            Load::Unstated => "–".to_string(),
        }
    }

    /// Whether `text` names this load: a bare number matches a concurrency or a rate of that value; `n=16`,
    /// `rate=2.5`, `rate=inf` and `load=unstated` match exactly.
    pub fn matches_text(self, text: &str) -> bool {
        let text = text.trim();
        if let Ok(load) = text.parse::<Load>() {
            return load == self;
        }
        match self {
            Load::Concurrency(n) => text.parse::<u32>().is_ok_and(|parsed| parsed == n),
            Load::Rate(rate) => text.parse::<RateRps>().is_ok_and(|parsed| parsed == rate),
            Load::Unstated => false,
        }
    }
}

/// The text form keys and links use: `n=16`, `rate=2.5`, `rate=inf`, `load=unstated`.
impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Load::Concurrency(n) => write!(f, "n={n}"),
            Load::Rate(rate) => write!(f, "rate={rate}"),
            Load::Unstated => f.write_str("load=unstated"),
        }
    }
}

/// Why a text is not a load.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a load (expected n=N, rate=R, rate=inf or load=unstated)")]
pub struct LoadError {
    /// The text that was read.
    pub text: String,
}

impl FromStr for Load {
    type Err = LoadError;

    /// Reads exactly the [`Display`](fmt::Display) form back (digits only after `n=`, as keys have always been).
    fn from_str(text: &str) -> Result<Load, LoadError> {
        let error = || LoadError {
            text: text.to_string(),
        };
        if text == "load=unstated" {
            return Ok(Load::Unstated);
        }
        if let Some(digits) = text.strip_prefix("n=") {
            // `u32::from_str` accepts a leading `+`; the text form never writes one.
            let all_digits = !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit());
            return all_digits
                .then(|| digits.parse().ok())
                .flatten()
                .map(Load::Concurrency)
                .ok_or_else(error);
        }
        if let Some(rate) = text.strip_prefix("rate=") {
            let rate: RateRps = rate.parse().map_err(|_| error())?;
            // Only the written form reads back, so one load has one text.
            return (rate.to_string() == text["rate=".len()..])
                .then_some(Load::Rate(rate))
                .ok_or_else(error);
        }
        Err(error())
    }
}

/// A load travels as its text form (`"n=16"`, `"rate=2.5"`).
impl serde::Serialize for Load {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Load {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Load, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A rate in JSON: a number, or the string `"inf"` (JSON has no infinity).
pub mod rate_json {
    use super::RateRps;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the rate as a number, or `"inf"`.
    pub fn serialize<S: Serializer>(rate: &RateRps, serializer: S) -> Result<S::Ok, S::Error> {
        if rate.is_infinite() {
            serializer.serialize_str("inf")
        } else {
            serializer.serialize_f64(rate.get())
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written<'a> {
        Number(f64),
        Text(std::borrow::Cow<'a, str>),
    }

    /// Reads a positive number, or `"inf"`.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<RateRps, D::Error> {
        let rate = match Written::deserialize(deserializer)? {
            Written::Number(rps) => RateRps::new(rps),
            Written::Text(text) => text.parse().ok(),
        };
        rate.ok_or_else(|| {
            serde::de::Error::custom("a rate must be a number above zero or \"inf\"")
        })
    }
}

/// An optional rate in JSON, for fields skipped when absent.
pub mod optional_rate_json {
    use super::{RateRps, rate_json};
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the rate as [`rate_json`] does (serde's `with` hands the field by reference).
    pub fn serialize<S: Serializer>(
        rate: &Option<RateRps>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match rate {
            Some(rate) => rate_json::serialize(rate, serializer),
            None => serializer.serialize_none(),
        }
    }

    #[derive(Deserialize)]
    struct Rate(#[serde(with = "rate_json")] RateRps);

    /// Reads an absent or null rate as `None`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<RateRps>, D::Error> {
        Ok(Option::<Rate>::deserialize(deserializer)?.map(|Rate(rate)| rate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rates_refuse_nan_zero_and_negatives() {
        for bad in [f64::NAN, 0.0, -0.0, -1.0, f64::NEG_INFINITY] {
            assert!(RateRps::new(bad).is_none(), "{bad}");
        }
        assert!(RateRps::new(f64::INFINITY).is_some());
        assert!(RateRps::new(f64::MIN_POSITIVE).is_some());
    }

    #[test]
    fn text_forms_and_labels() {
        let cases = [
            (Load::Concurrency(16), "n=16", "N=16"),
            (Load::rate(2.5).unwrap(), "rate=2.5", "2.5 req/s"),
            (Load::rate(1.0).unwrap(), "rate=1", "1 req/s"),
            (Load::rate(f64::INFINITY).unwrap(), "rate=inf", "∞ req/s"),
            (Load::Unstated, "load=unstated", "load unstated"),
        ];
        for (load, text, label) in cases {
            assert_eq!(load.to_string(), text);
            assert_eq!(text.parse::<Load>(), Ok(load));
            assert_eq!(load.label(), label);
        }
        for bad in [
            "", "n=", "n=+1", "n=x", "rate=0", "rate=-1", "rate=nan", "rate=1.0", "16",
        ] {
            assert!(bad.parse::<Load>().is_err(), "{bad}");
        }
    }

    #[test]
    fn order_is_concurrency_then_rate_then_unstated_with_inf_last() {
        let loads: std::collections::BTreeSet<Load> = [
            Load::Unstated,
            Load::rate(f64::INFINITY).unwrap(),
            Load::rate(4.0).unwrap(),
            Load::Concurrency(64),
            Load::rate(0.5).unwrap(),
            Load::Concurrency(1),
        ]
        .into_iter()
        .collect();

        let texts: Vec<String> = loads.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "n=1",
                "n=64",
                "rate=0.5",
                "rate=4",
                "rate=inf",
                "load=unstated"
            ]
        );
    }

    #[test]
    fn bare_numbers_match_either_kind_and_prefixed_texts_match_exactly() {
        let n16 = Load::Concurrency(16);
        let r16 = Load::rate(16.0).unwrap();
        assert!(n16.matches_text("16") && r16.matches_text("16"));
        assert!(n16.matches_text("n=16") && !r16.matches_text("n=16"));
        assert!(r16.matches_text("rate=16") && !n16.matches_text("rate=16"));
        assert!(Load::rate(f64::INFINITY).unwrap().matches_text("rate=inf"));
        assert!(Load::rate(f64::INFINITY).unwrap().matches_text("inf"));
        assert!(Load::Unstated.matches_text("load=unstated"));
        assert!(!Load::Unstated.matches_text("16"));
    }

    fn any_load() -> impl Strategy<Value = Load> {
        prop_oneof![
            any::<u32>().prop_map(Load::Concurrency),
            (any::<f64>().prop_filter_map("a rate", Load::rate)),
            Just(Load::rate(f64::INFINITY).unwrap()),
            Just(Load::Unstated),
        ]
    }

    proptest! {
        #[test]
        fn the_text_form_round_trips(load in any_load()) {
            prop_assert_eq!(load.to_string().parse::<Load>(), Ok(load));
        }

        #[test]
        fn the_order_follows_kind_then_value(a in any_load(), b in any_load()) {
            let by_parts = a.kind().cmp(&b.kind()).then_with(|| {
                a.value().unwrap_or(0.0).total_cmp(&b.value().unwrap_or(0.0))
            });
            prop_assert_eq!(a.cmp(&b), by_parts);
        }
    }
}
