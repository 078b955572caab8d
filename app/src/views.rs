//! The views' code in WASM chunks of their own: each view's component is reached only through its entry point
//! below, which `cargo xtask build-web` splits off with everything only that view runs, and the shell loads a
//! view's chunk the first time the view is shown. So the first screen downloads the shell and the one view it
//! draws, whatever other views the app grows.

use cellscope_model::view_state::View;
use leptos::prelude::*;
use leptos::wasm_split::{SplitLoaderError, wasm_split};

/// Builds a view's component: a function of the view's chunk, callable once the chunk is loaded.
type Build = fn() -> AnyView;

/// Where a view's chunk is.
#[derive(Clone)]
enum Chunk {
    Loading,
    Loaded(Build),
    /// The load failed, with why (a later [`Views::load`] tries again).
    Failed(String),
}

/// What the shell shows of a view, by the state of its chunk.
#[derive(Clone, PartialEq)]
pub(crate) enum Status {
    Loading,
    Ready,
    Failed(String),
}

/// The views' chunks, asked for and loaded.
#[derive(Clone, Copy)]
pub(crate) struct Views {
    chunks: RwSignal<Vec<(View, Chunk)>>,
}

impl Views {
    pub(crate) fn new() -> Views {
        Views {
            chunks: RwSignal::new(Vec::new()),
        }
    }

    fn chunk(chunks: &[(View, Chunk)], view: View) -> Option<&Chunk> {
        chunks
            .iter()
            .find(|(asked, _)| *asked == view)
            .map(|(_, chunk)| chunk)
    }

    /// The state of `view`'s chunk (tracked); a chunk not asked for yet is loading, as [`Views::load`] is about
    /// to ask for it.
    pub(crate) fn status(self, view: View) -> Status {
        self.chunks.with(|chunks| match Views::chunk(chunks, view) {
            None | Some(Chunk::Loading) => Status::Loading,
            Some(Chunk::Loaded(_)) => Status::Ready,
            Some(Chunk::Failed(error)) => Status::Failed(error.clone()),
        })
    }

    /// `view`'s component, built by its chunk; `None` until the chunk is loaded (untracked: the caller tracks
    /// [`Views::status`]).
    pub(crate) fn build(self, view: View) -> Option<AnyView> {
        let build = self
            .chunks
            .with_untracked(|chunks| match Views::chunk(chunks, view) {
                Some(Chunk::Loaded(build)) => Some(*build),
                _ => None,
            })?;
        Some(build())
    }

    /// Loads `view`'s chunk unless it is loaded or loading.
    pub(crate) fn load(self, view: View) {
        let asked = self.chunks.with_untracked(|chunks| {
            matches!(
                Views::chunk(chunks, view),
                Some(Chunk::Loading | Chunk::Loaded(_))
            )
        });
        if asked {
            return;
        }
        self.set(view, Chunk::Loading);
        leptos::task::spawn_local(async move {
            let chunk = match entry(view).await {
                Ok(build) => Chunk::Loaded(build),
                Err(error) => Chunk::Failed(error.to_string()),
            };
            self.set(view, chunk);
        });
    }

    fn set(self, view: View, chunk: Chunk) {
        self.chunks.update(|chunks| {
            chunks.retain(|(asked, _)| *asked != view);
            chunks.push((view, chunk));
        });
    }
}

/// `view`'s entry point, loading its chunk first when it is not loaded yet.
async fn entry(view: View) -> Result<Build, SplitLoaderError> {
    match view {
        View::Matrix => matrix().await,
        View::Curves => curves().await,
        View::Compare => compare().await,
        View::Inspector => inspector().await,
        View::Audit => audit().await,
        View::History => history().await,
    }
}

// Each entry point is an `extern "C"` import of the shell and an export of the view's chunk, which the macro
// declares with `no_mangle` names and the splitter links; they carry no argument and return a function pointer.
// The module named first is the chunk's name, which the xtask keeps in the chunk's file name.

#[allow(unsafe_code)] // SAFETY: see above; the macro's declarations are the only unsafe code.
#[wasm_split(matrix, wasm_split_path = ::leptos::wasm_split, fallible)]
fn matrix() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <crate::matrix::MatrixView/> }.into_any())
}

#[allow(unsafe_code)] // SAFETY: see above.
#[wasm_split(curves, wasm_split_path = ::leptos::wasm_split, fallible)]
fn curves() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <crate::curves::CurvesView/> }.into_any())
}

#[allow(unsafe_code)] // SAFETY: see above.
#[wasm_split(compare, wasm_split_path = ::leptos::wasm_split, fallible)]
fn compare() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <crate::compare::CompareView/> }.into_any())
}

#[allow(unsafe_code)] // SAFETY: see above.
#[wasm_split(inspector, wasm_split_path = ::leptos::wasm_split, fallible)]
fn inspector() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <crate::inspector::InspectorView/> }.into_any())
}

#[allow(unsafe_code)] // SAFETY: see above.
#[wasm_split(audit, wasm_split_path = ::leptos::wasm_split, fallible)]
fn audit() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <crate::audit::AuditView/> }.into_any())
}

#[allow(unsafe_code)] // SAFETY: see above.
#[wasm_split(history, wasm_split_path = ::leptos::wasm_split, fallible)]
fn history() -> Result<Build, SplitLoaderError> {
    Ok(|| view! { <crate::history::HistoryView/> }.into_any())
}
