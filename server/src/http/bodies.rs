//! Filtered `/api/cells` bodies kept per snapshot: encoded and compressed once per normalised query, so a
//! dashboard that asks for the same slice again is served bytes, not a rebuilt and recompressed table.

use axum::body::Bytes;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// How many bytes (plain and compressed together) one snapshot keeps of filtered bodies. A body larger than
/// this is built for its request and not kept. 64 MiB holds the 4.5 MB unfiltered-size body of the 10-million-row
/// scale several times over, and hundreds of the slices a user clicks through.
pub const BUDGET_BYTES: usize = 64 << 20;

/// One body: as encoded, and compressed in each encoding, best first (the unfiltered body's encodings).
#[derive(Debug)]
pub struct Body {
    pub plain: Bytes,
    pub compressed: Vec<(&'static str, Bytes)>,
}

impl Body {
    pub fn new(plain: Vec<u8>) -> Body {
        let compressed = super::snapshot::compress_all(&plain);
        Body {
            plain: Bytes::from(plain),
            compressed,
        }
    }

    fn bytes(&self) -> usize {
        self.plain.len()
            + self
                .compressed
                .iter()
                .map(|(_, body)| body.len())
                .sum::<usize>()
    }
}

/// The key of a query: every parameter that shapes the body, values sorted and deduplicated, so
/// `backend=vllm,sglang` and `backend=sglang&backend=vllm` share one entry.
pub fn key(format: &str, pre_refill: bool, values: &BTreeMap<String, Vec<String>>) -> String {
    let mut key = format!("{format}|{pre_refill}");
    for (name, list) in values {
        let mut list = list.clone();
        list.sort();
        list.dedup();
        // Each part is prefixed by its length, so no value (whatever characters it holds) can read as two.
        key.push_str(&format!("|{}:{name}=", name.len()));
        for value in list {
            key.push_str(&format!("{}:{value};", value.len()));
        }
    }
    key
}

/// Bodies by key, oldest evicted first once over [`BUDGET_BYTES`].
#[derive(Debug, Default)]
pub struct Bodies {
    inner: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    bodies: HashMap<String, Arc<Body>>,
    order: VecDeque<String>,
    bytes: usize,
}

impl Bodies {
    pub fn get(&self, key: &str) -> Option<Arc<Body>> {
        let kept = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.bodies.get(key).cloned()
    }

    /// Keeps `body` under `key` (unless it alone is over budget), evicting the oldest bodies to make room.
    pub fn insert(&self, key: String, body: Arc<Body>) {
        let size = body.bytes();
        if size > BUDGET_BYTES {
            return;
        }
        let mut kept = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if kept.bodies.contains_key(&key) {
            return;
        }
        while kept.bytes + size > BUDGET_BYTES {
            let Some(oldest) = kept.order.pop_front() else {
                break;
            };
            if let Some(evicted) = kept.bodies.remove(&oldest) {
                kept.bytes -= evicted.bytes();
            }
        }
        kept.bytes += size;
        kept.order.push_back(key.clone());
        kept.bodies.insert(key, body);
    }

    /// Bodies kept and their bytes (for tests and the log).
    pub fn usage(&self) -> (usize, usize) {
        let kept = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        (kept.bodies.len(), kept.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        pairs
            .iter()
            .map(|(name, list)| {
                (
                    name.to_string(),
                    list.iter().map(|v| v.to_string()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn equal_filters_share_a_key_and_different_ones_do_not() {
        let a = key(
            "arrow",
            false,
            &values(&[("backend", &["vllm", "sglang"]), ("n", &["4"])]),
        );
        let b = key(
            "arrow",
            false,
            &values(&[("n", &["4"]), ("backend", &["sglang", "vllm", "vllm"])]),
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            key(
                "csv",
                false,
                &values(&[("backend", &["vllm", "sglang"]), ("n", &["4"])])
            )
        );
        assert_ne!(
            a,
            key(
                "arrow",
                true,
                &values(&[("backend", &["vllm", "sglang"]), ("n", &["4"])])
            )
        );
        // Two values are never confused with one value holding both.
        assert_ne!(
            key("arrow", false, &values(&[("model", &["a", "b"])])),
            key("arrow", false, &values(&[("model", &["a\u{1f}b"])]))
        );
    }

    #[test]
    fn the_oldest_bodies_go_first_and_the_budget_holds() {
        let bodies = Bodies::default();
        let body = |bytes: usize| {
            Arc::new(Body {
                plain: Bytes::from(vec![0u8; bytes]),
                compressed: Vec::new(),
            })
        };
        let third = BUDGET_BYTES / 3;
        for name in ["a", "b", "c"] {
            bodies.insert(name.into(), body(third));
        }
        assert_eq!(bodies.usage().0, 3);
        bodies.insert("d".into(), body(third));
        assert!(bodies.get("a").is_none(), "the oldest went");
        assert!(bodies.get("b").is_some() && bodies.get("d").is_some());
        assert!(bodies.usage().1 <= BUDGET_BYTES);
        bodies.insert("huge".into(), body(BUDGET_BYTES + 1));
        assert!(
            bodies.get("huge").is_none(),
            "a body over the budget is not kept"
        );
        assert_eq!(bodies.usage().0, 3);
    }
}
