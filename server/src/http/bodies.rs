//! Filtered `/api/cells` bodies kept per snapshot: encoded and compressed once per normalised query, so a
//! dashboard that asks for the same slice again is served bytes, not a rebuilt and recompressed table.
//!
//! Requests for a slice that is not kept yet wait for one build of it, because many connections asking for the
//! same new slice at once would otherwise each build and compress it, holding all of them on a small machine.

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
        let compressed = super::encoding::compress_all(&plain);
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
    /// Slices being built, each with the cell every request for it waits on.
    building: HashMap<String, Arc<tokio::sync::OnceCell<Arc<Body>>>>,
}

impl Bodies {
    /// The body kept under `key`, without building it (the tests' view; requests go through `get_or_build`,
    /// which looks up and registers a build under one lock).
    #[cfg(test)]
    pub fn get(&self, key: &str) -> Option<Arc<Body>> {
        let kept = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.bodies.get(key).cloned()
    }

    /// The body kept under `key`, or the one `build` makes (on a blocking thread): however many requests ask
    /// for a missing key at once, `build` runs once and they all get its body. A failed build is not kept; the
    /// next request tries again.
    pub async fn get_or_build<E>(
        &self,
        key: &str,
        build: impl FnOnce() -> Result<Arc<Body>, E> + Send + 'static,
    ) -> Result<Arc<Body>, E>
    where
        E: From<tokio::task::JoinError> + Send + 'static,
    {
        let building = {
            let mut kept = self
                .inner
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(body) = kept.bodies.get(key) {
                return Ok(body.clone());
            }
            kept.building.entry(key.to_string()).or_default().clone()
        };
        let body = building
            .get_or_try_init(|| async move { tokio::task::spawn_blocking(build).await? })
            .await?
            .clone();
        self.insert(key.to_string(), body.clone());
        Ok(body)
    }

    /// Keeps `body` under `key` (unless it alone is over budget), evicting the oldest bodies to make room.
    pub fn insert(&self, key: String, body: Arc<Body>) {
        let size = body.bytes();
        let mut kept = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // The build is over either way: later requests find the body kept, or (over budget) build their own.
        kept.building.remove(&key);
        if size > BUDGET_BYTES || kept.bodies.contains_key(&key) {
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_for_a_missing_slice_at_once_build_it_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let bodies = Arc::new(Bodies::default());
        let builds = Arc::new(AtomicUsize::new(0));
        let requests: Vec<_> = (0..32)
            .map(|_| {
                let (bodies, builds) = (bodies.clone(), builds.clone());
                tokio::spawn(async move {
                    bodies
                        .get_or_build("arrow|false|7:backend=4:vllm;", move || {
                            builds.fetch_add(1, Ordering::SeqCst);
                            // Long enough that every request arrives while the first build runs.
                            std::thread::sleep(std::time::Duration::from_millis(200));
                            Ok::<_, tokio::task::JoinError>(Arc::new(Body::new(vec![7; 1000])))
                        })
                        .await
                })
            })
            .collect();
        let mut answered = Vec::new();
        for request in requests {
            answered.push(request.await.expect("the request task").expect("the body"));
        }
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        assert!(answered.iter().all(|body| Arc::ptr_eq(body, &answered[0])));
        assert_eq!(bodies.usage().0, 1);
        // Kept now: a later request is served the same body without building.
        let later = bodies
            .get_or_build(
                "arrow|false|7:backend=4:vllm;",
                || -> Result<Arc<Body>, tokio::task::JoinError> {
                    panic!("a kept body is not built again")
                },
            )
            .await
            .expect("the kept body");
        assert!(Arc::ptr_eq(&later, &answered[0]));
    }

    #[tokio::test]
    async fn a_failed_build_is_not_kept_and_the_next_request_builds_again() {
        let bodies = Bodies::default();
        let failed = bodies
            .get_or_build("k", || Err::<Arc<Body>, _>(ApiErrorLike))
            .await;
        assert!(failed.is_err());
        assert_eq!(bodies.usage().0, 0);
        let built = bodies
            .get_or_build("k", || {
                Ok::<_, ApiErrorLike>(Arc::new(Body::new(vec![1, 2, 3])))
            })
            .await
            .expect("the second build");
        assert_eq!(&built.plain[..], &[1, 2, 3]);
        assert_eq!(bodies.usage().0, 1);
    }

    /// An error type for the failing build.
    #[derive(Debug)]
    struct ApiErrorLike;

    impl From<tokio::task::JoinError> for ApiErrorLike {
        fn from(_: tokio::task::JoinError) -> Self {
            ApiErrorLike
        }
    }
}
