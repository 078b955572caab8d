//! How keys and coordinates are serialised: to people-readable formats (JSON) with the load as `"n": N` or
//! `"rate_rps": R` in the place `n` has always held, to compact formats (the cache's) with the load as one field.

use super::{CellCoordinates, CellKey, Config, Load, RateRps};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The load as readable fields: `n` for a concurrency, `rate_rps` for a rate, neither when unstated.
#[derive(Serialize, Deserialize)]
struct LoadFields {
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "n_agents")]
    n: Option<u32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::load::optional_rate_json"
    )]
    rate_rps: Option<RateRps>,
}

impl LoadFields {
    fn of(load: Load) -> LoadFields {
        LoadFields {
            n: load.concurrency(),
            rate_rps: match load {
                Load::Rate(rate) => Some(rate),
                _ => None,
            },
        }
    }

    fn load<E: serde::de::Error>(self) -> Result<Load, E> {
        match (self.n, self.rate_rps) {
            (Some(n), None) => Ok(Load::Concurrency(n)),
            (None, Some(rate)) => Ok(Load::Rate(rate)),
            (None, None) => Ok(Load::Unstated),
            (Some(_), Some(_)) => Err(E::custom("a cell has either `n` or `rate_rps`, not both")),
        }
    }
}

/// A load as a compact format holds it.
#[derive(Serialize, Deserialize)]
enum CompactLoad {
    Concurrency(u32),
    Rate(f64),
    Unstated,
}

impl From<Load> for CompactLoad {
    fn from(load: Load) -> CompactLoad {
        match load {
            Load::Concurrency(n) => CompactLoad::Concurrency(n),
            Load::Rate(rate) => CompactLoad::Rate(rate.get()),
            Load::Unstated => CompactLoad::Unstated,
        }
    }
}

impl CompactLoad {
    fn load<E: serde::de::Error>(self) -> Result<Load, E> {
        match self {
            CompactLoad::Concurrency(n) => Ok(Load::Concurrency(n)),
            CompactLoad::Rate(rps) => Load::rate(rps).ok_or_else(|| E::custom("not a rate")),
            CompactLoad::Unstated => Ok(Load::Unstated),
        }
    }
}

/// The fields of a key or of coordinates (`run` is `None` for coordinates), with the load in the form `L`.
#[derive(Serialize, Deserialize)]
struct Fields<T, C, L> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    run_id: Option<T>,
    suite: T,
    phase: T,
    backend: T,
    model: T,
    workload: T,
    #[serde(
        default,
        skip_serializing_if = "is_empty",
        bound(
            serialize = "C: Serialize + std::borrow::Borrow<Config>",
            deserialize = "C: Deserialize<'de> + Default"
        )
    )]
    config: C,
    #[serde(flatten)]
    load: L,
    rep: u32,
}

/// Whether a configuration (owned or borrowed) states nothing: an empty one is left out of the readable form.
fn is_empty<C: std::borrow::Borrow<Config>>(config: &C) -> bool {
    config.borrow().is_empty()
}

/// The readable form flattens [`LoadFields`]; the compact form cannot flatten, so it names the load field.
#[derive(Serialize, Deserialize)]
struct CompactFields<T, C> {
    run_id: Option<T>,
    suite: T,
    phase: T,
    backend: T,
    model: T,
    workload: T,
    config: C,
    load: CompactLoad,
    rep: u32,
}

fn serialize_parts<S: Serializer>(
    serializer: S,
    run_id: Option<&str>,
    texts: [&str; 5],
    config: &Config,
    load: Load,
    rep: u32,
) -> Result<S::Ok, S::Error> {
    let [suite, phase, backend, model, workload] = texts;
    if serializer.is_human_readable() {
        let load = LoadFields::of(load);
        Fields {
            run_id,
            suite,
            phase,
            backend,
            model,
            workload,
            config,
            load,
            rep,
        }
        .serialize(serializer)
    } else {
        let load = CompactLoad::from(load);
        CompactFields {
            run_id,
            suite,
            phase,
            backend,
            model,
            workload,
            config,
            load,
            rep,
        }
        .serialize(serializer)
    }
}

type Parts = (Option<String>, CellCoordinates);

fn deserialize_parts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Parts, D::Error> {
    let (run_id, texts, config, load, rep) = if deserializer.is_human_readable() {
        let at = Fields::<String, Config, LoadFields>::deserialize(deserializer)?;
        (
            at.run_id,
            [at.suite, at.phase, at.backend, at.model, at.workload],
            at.config,
            at.load.load()?,
            at.rep,
        )
    } else {
        let at = CompactFields::<String, Config>::deserialize(deserializer)?;
        (
            at.run_id,
            [at.suite, at.phase, at.backend, at.model, at.workload],
            at.config,
            at.load.load()?,
            at.rep,
        )
    };
    let [suite, phase, backend, model, workload] = texts;
    Ok((
        run_id,
        CellCoordinates {
            suite,
            phase,
            backend,
            model,
            workload,
            config,
            load,
            rep,
        },
    ))
}

impl Serialize for CellKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let [run_id, suite, phase, backend, model, workload] = self.series_components();
        let texts = [suite, phase, backend, model, workload];
        serialize_parts(
            serializer,
            Some(run_id),
            texts,
            &self.config,
            self.load,
            self.rep,
        )
    }
}

impl<'de> Deserialize<'de> for CellKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CellKey, D::Error> {
        let (run_id, coordinates) = deserialize_parts(deserializer)?;
        let run_id = run_id.ok_or_else(|| serde::de::Error::missing_field("run_id"))?;
        Ok(CellKey::new(&run_id, &coordinates))
    }
}

impl Serialize for CellCoordinates {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let texts = [
            &*self.suite,
            &self.phase,
            &self.backend,
            &self.model,
            &self.workload,
        ];
        serialize_parts(serializer, None, texts, &self.config, self.load, self.rep)
    }
}

impl<'de> Deserialize<'de> for CellCoordinates {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CellCoordinates, D::Error> {
        Ok(deserialize_parts(deserializer)?.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(load: Load) -> CellKey {
        CellKey {
            run_id: "r".into(),
            suite: "s".into(),
            phase: "p".into(),
            backend: "b".into(),
            model: "m".into(),
            workload: "w".into(),
            config: Config::new(),
            load,
            rep: 0,
        }
    }

    #[test]
    fn json_writes_n_or_rate_rps_in_place_of_the_load() {
        let cases = [
            (
                Load::Concurrency(16),
                r#"{"run_id":"r","suite":"s","phase":"p","backend":"b","model":"m","workload":"w","n":16,"rep":0}"#,
            ),
            (
                Load::rate(2.5).unwrap(),
                r#""workload":"w","rate_rps":2.5,"rep":0}"#,
            ),
            (
                Load::rate(f64::INFINITY).unwrap(),
                r#""workload":"w","rate_rps":"inf","rep":0}"#,
            ),
            (Load::Unstated, r#""workload":"w","rep":0}"#),
        ];
        for (load, tail) in cases {
            let json = serde_json::to_string(&key(load)).unwrap();
            assert!(json.ends_with(tail), "{json}");
            assert_eq!(serde_json::from_str::<CellKey>(&json).unwrap(), key(load));
            let at = serde_json::to_string(&key(load).coordinates()).unwrap();
            assert!(at.starts_with(r#"{"suite":"s""#), "{at}");
            assert_eq!(
                serde_json::from_str::<CellCoordinates>(&at).unwrap(),
                key(load).coordinates()
            );
        }
        let old = r#"{"suite":"s","phase":"p","backend":"b","model":"m","workload":"w","n_agents":4,"rep":1}"#;
        assert_eq!(
            serde_json::from_str::<CellCoordinates>(old).unwrap().load,
            Load::Concurrency(4)
        );
    }
}
