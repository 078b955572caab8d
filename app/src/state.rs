//! The app's shared state: the view state (synced with the URL), the loaded data and the cells after the what-if
//! toggles, provided as one context to every view. Views depend on this module, never on each other.

use crate::api::{self, Dataset};
use crate::{browser, perf};
use cellscope_model::CellSummary;
use cellscope_model::explore::{
    opening_at_load, opening_metric, split_dimensions, view_comparisons, working_cells,
};
use cellscope_model::view_state::{IgnoredParameter, ViewState};
use leptos::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// Shared state, provided as context to every view.
#[derive(Clone, Copy)]
pub(crate) struct Ctx {
    pub state: RwSignal<ViewState>,
    /// Parameters of the current URL that the view state could not use (shown as a notice).
    pub ignored: RwSignal<Vec<IgnoredParameter>>,
    pub data: RwSignal<Option<Arc<Dataset>>>,
    /// The cells after the what-if toggles, with scaling metrics recomputed in the browser.
    pub working: Memo<Arc<Vec<CellSummary>>>,
    /// Which working cells pass the dimension filter (their indices): computed once per filter or data change
    /// and shared by the view, the slice count and the empty notice, so a metric change filters nothing.
    filtered: Memo<Arc<Vec<usize>>>,
    /// The `comparison`-scope ledger entries that apply in the current view to the filtered cells: they change
    /// only with those cells or with the dimensions that split the view, not with the metric.
    pub comparisons: Memo<BTreeSet<String>>,
    /// A newer snapshot announced by the server.
    pub newer: RwSignal<Option<String>>,
    /// The server's current snapshot, as last announced or loaded.
    pub latest: RwSignal<Option<String>>,
    pub error: RwSignal<Option<String>>,
    /// Why the view opened on another metric than the default (shown as a notice until dismissed).
    pub opening: RwSignal<Option<String>>,
    /// The link names no metric, so the first data loaded chooses one ([`opening_metric`]); cleared once done.
    choose_metric: StoredValue<bool>,
    /// The link names no load for the matrix, so the first data loaded may choose one ([`opening_at_load`]).
    choose_at_load: StoredValue<bool>,
}

/// The cells at `indices`.
fn filtered_cells<'a>(cells: &'a [CellSummary], indices: &[usize]) -> Vec<&'a CellSummary> {
    indices
        .iter()
        .filter_map(|index| cells.get(*index))
        .collect()
}

pub(crate) fn ctx() -> Ctx {
    use_context::<Ctx>().expect("the app context is provided by App")
}

impl Ctx {
    /// Creates the context from the current URL, provides it, and starts loading, live updates and URL sync.
    pub(crate) fn provide() -> Ctx {
        let search = browser::search();
        let (mut initial, ignored) = ViewState::parse_query(&search);
        let mut choose_metric = !cellscope_model::query::names_any(&search, &["metric"]);
        // A History link that names no metric follows the one `/api/history` and the CLI follow by default.
        if choose_metric && initial.view == cellscope_model::view_state::View::History {
            initial.metric = cellscope_model::history::DEFAULT_METRIC;
            choose_metric = false;
        }
        let choose_at_load = !cellscope_model::query::names_any(&search, &["at_load", "at_n"]);
        let state = RwSignal::new(initial);
        let data: RwSignal<Option<Arc<Dataset>>> = RwSignal::new(None);
        let what_if = Memo::new(move |_| state.with(|state| state.what_if.pre_refill));
        let working = Memo::new(move |_| {
            let pre_refill = what_if.get();
            data.with(|data| match data {
                Some(data) => {
                    let what_if = cellscope_model::view_state::WhatIf {
                        pre_refill,
                        ..Default::default()
                    };
                    Arc::new(working_cells(&data.cells, &data.pre_refill, &what_if))
                }
                None => Arc::new(Vec::new()),
            })
        });
        // The filter alone: other changes of the view state leave it equal, so the filtered cells stay.
        let filter = Memo::new(move |_| state.with(|state| state.filter.clone()));
        let filtered = Memo::new(move |_| {
            working.with(|cells| {
                filter.with(|filter| {
                    Arc::new(
                        cells
                            .iter()
                            .enumerate()
                            .filter(|(_, cell)| filter.admits(&cell.key))
                            .map(|(index, _)| index)
                            .collect::<Vec<_>>(),
                    )
                })
            })
        });
        let split = Memo::new(move |_| state.with(split_dimensions));
        let comparisons = Memo::new(move |_| {
            split.track();
            working.with(|cells| {
                filtered.with(|indices| {
                    // Only the split dimensions of the state matter here, and `split` is tracked above.
                    state.with_untracked(|state| {
                        view_comparisons(&filtered_cells(cells, indices), state)
                    })
                })
            })
        });
        let ctx = Ctx {
            state,
            ignored: RwSignal::new(ignored),
            data,
            working,
            filtered,
            comparisons,
            newer: RwSignal::new(None),
            latest: RwSignal::new(None),
            error: RwSignal::new(None),
            opening: RwSignal::new(None),
            choose_metric: StoredValue::new(choose_metric),
            choose_at_load: StoredValue::new(choose_at_load),
        };
        provide_context(ctx);
        ctx.load();
        ctx.listen_for_snapshots();
        ctx.sync_url();
        ctx
    }

    /// Every value of `dimension` in the data, in the index's order (tracked: a new snapshot updates it).
    pub(crate) fn values_of(&self, dimension: cellscope_model::Dimension) -> Vec<String> {
        self.data.with(|data| {
            data.as_ref()
                .and_then(|data| data.index.dimensions.get(&dimension))
                .map(|values| values.iter().map(|count| count.value.to_string()).collect())
                .unwrap_or_default()
        })
    }

    /// `fixed`, then the deployment parameters of the data (tracked): the choices of a dimension picker, so a
    /// parameter the link or the filter bar can name can be picked too.
    pub(crate) fn dimension_choices(
        &self,
        fixed: &[cellscope_model::Dimension],
    ) -> Vec<cellscope_model::Dimension> {
        let params: Vec<cellscope_model::Dimension> = self.data.with(|data| {
            data.as_ref()
                .map(|data| {
                    data.index
                        .dimensions
                        .keys()
                        .copied()
                        .filter(|dimension| dimension.is_param())
                        .collect()
                })
                .unwrap_or_default()
        });
        fixed.iter().copied().chain(params).collect()
    }

    /// One part of the view state, as a memo: what reads it runs again only when that part changes. The view
    /// state is one signal, so a closure reading it directly runs on every change of anything in it: on a
    /// metric change, every checkbox of the filter bar and every option of every select set its property
    /// again, which was most of the script time of that repaint.
    pub(crate) fn part<T>(&self, read: impl Fn(&ViewState) -> T + Send + Sync + 'static) -> Memo<T>
    where
        T: PartialEq + Send + Sync + 'static,
    {
        let state = self.state;
        Memo::new(move |_| state.with(&read))
    }

    /// Calls `view` with the working cells and those of them passing the filter (both tracked).
    pub(crate) fn with_filtered<T>(
        &self,
        view: impl FnOnce(&[CellSummary], &[&CellSummary]) -> T,
    ) -> T {
        self.working.with(|cells| {
            self.filtered
                .with(|indices| view(cells, &filtered_cells(cells, indices)))
        })
    }

    /// [`Ctx::with_filtered`] without tracking: for event handlers.
    pub(crate) fn with_filtered_untracked<T>(
        &self,
        view: impl FnOnce(&[CellSummary], &[&CellSummary]) -> T,
    ) -> T {
        self.working.with_untracked(|cells| {
            self.filtered
                .with_untracked(|indices| view(cells, &filtered_cells(cells, indices)))
        })
    }

    /// Changes the view state (one history entry) and marks the time for the repaint measurement.
    pub(crate) fn update(&self, change: impl FnOnce(&mut ViewState)) {
        perf::clear("filter-change");
        perf::mark("filter-change");
        self.state.update(change);
        perf::measure_repaint();
    }

    /// Goes to another view state (one history entry), as a link within the app does.
    pub(crate) fn go(&self, target: ViewState) {
        self.update(move |state| *state = target);
    }

    /// Loads the snapshot the link names (`at=`; the server keeps recent ones), else the current one and pins it
    /// in the URL so a copied link names the data it was made with; then provenance and the pre-refill cells.
    pub(crate) fn load(self) {
        let ctx = self;
        let at = ctx.state.with_untracked(|state| state.at.clone());
        leptos::task::spawn_local(async move {
            match api::load(at.clone()).await {
                Ok(dataset) => {
                    let snapshot = dataset.snapshot.clone();
                    // The data asked for: the link's snapshot, or the current one when none was named or it is gone.
                    let shown = if dataset.gone.is_none() {
                        at.clone()
                    } else {
                        None
                    };
                    if shown.is_none() {
                        ctx.latest.set(Some(snapshot.clone()));
                    }
                    let dataset_complete = dataset.index.complete;
                    ctx.data.set(Some(Arc::new(dataset)));
                    ctx.newer.set(None);
                    ctx.error.set(None);
                    if at.is_none() {
                        ctx.state.update(|state| state.at = Some(snapshot.clone()));
                    }
                    ctx.drop_unknown_values();
                    ctx.choose_opening_view();
                    match api::load_details(shown.clone()).await {
                        Ok((provenance, pre_refill)) => ctx.data.update(|data| {
                            if let Some(data) =
                                data.as_mut().filter(|data| data.snapshot == snapshot)
                            {
                                let details = Arc::make_mut(data);
                                details.provenance = Some(provenance);
                                details.pre_refill = pre_refill;
                            }
                        }),
                        Err(error) => ctx.error.set(Some(error)),
                    }
                    // The browser tests time repaints once nothing else is arriving.
                    perf::mark("details-loaded");
                    // An index served before the second stage has no checksums or backup comparisons, and the
                    // server announces no new snapshot when they arrive (the data are the same). The pre-refill
                    // cells above waited for that stage, so the index asked for now has them: the Audit's runs.
                    if !dataset_complete
                        && let Ok(index) = api::index_at(shown.as_deref()).await
                        && index.snapshot == snapshot
                        && index.complete
                    {
                        // The provenance too: the statuses of the rows a refill replaced come from that stage.
                        let provenance = api::provenance_at(shown.clone()).await.ok();
                        ctx.data.update(|data| {
                            if let Some(data) =
                                data.as_mut().filter(|data| data.snapshot == snapshot)
                            {
                                let data = Arc::make_mut(data);
                                data.index = index;
                                if let Some(provenance) = provenance {
                                    data.provenance = Some(provenance);
                                }
                            }
                        });
                    }
                }
                Err(error) => ctx.error.set(Some(error)),
            }
        });
    }

    /// On the first data of a link that names no metric, opens on one the data can show when the default has
    /// nothing to show, and says why. The choice is written into the link, so a copy reopens it.
    /// Likewise the matrix opens at a load the data has when no cell is at the default N = 16.
    fn choose_opening_view(self) {
        if self.choose_at_load.get_value() {
            self.choose_at_load.set_value(false);
            if let Some(load) = self.working.with_untracked(|cells| opening_at_load(cells)) {
                self.state.update(|state| state.at_load = load);
            }
        }
        if !self.choose_metric.get_value() {
            return;
        }
        self.choose_metric.set_value(false);
        if let Some((metric, why)) = self.working.with_untracked(|cells| opening_metric(cells)) {
            self.state.update(|state| state.metric = metric);
            self.opening.set(Some(why));
        }
    }

    /// Takes the filter values no cell of the loaded data has out of the view state and lists them in the
    /// notice of the link's ignored parameters, instead of showing an empty view without a word.
    fn drop_unknown_values(self) {
        let known = self.data.with_untracked(|data| {
            data.as_ref().map(|data| {
                data.index
                    .dimensions
                    .iter()
                    .map(|(dimension, counts)| {
                        (
                            *dimension,
                            counts.iter().map(|count| count.value.clone()).collect(),
                        )
                    })
                    .collect::<std::collections::BTreeMap<_, Vec<_>>>()
            })
        });
        let Some(known) = known else { return };
        let has_unknown = self
            .state
            .with_untracked(|state| !state.filter.unknown_values(&known).is_empty());
        if has_unknown {
            let mut dropped = Vec::new();
            self.state
                .update(|state| dropped = state.drop_unknown_values(&known));
            self.ignored.update(|ignored| ignored.extend(dropped));
        }
    }

    /// Shows the server's current data and pins the link to it.
    pub(crate) fn show_latest(self) {
        self.state.update(|state| state.at = None);
        self.load();
    }

    fn listen_for_snapshots(self) {
        // An offline copy is one snapshot for good: there is no server to announce another.
        if crate::offline::is_offline() {
            return;
        }
        let ctx = self;
        crate::live::listen(move |id| {
            // New data while the page showed the latest: say so. A page opened on an older, pinned snapshot says
            // it in its own banner instead.
            let previous = ctx.latest.get_untracked();
            ctx.latest.set(Some(id.clone()));
            let shown = ctx
                .data
                .with_untracked(|data| data.as_ref().map(|data| data.snapshot.clone()));
            if shown.is_some() && previous == shown && shown.as_ref() != Some(&id) {
                ctx.newer.set(Some(id));
            }
        });
    }

    fn sync_url(self) {
        let ctx = self;
        // State → URL: a new history entry per change, so Back/Forward walk through views.
        Effect::new(move |previous: Option<String>| {
            let query = ctx.state.with(ViewState::to_query);
            let current = browser::search();
            let current = current.strip_prefix('?').unwrap_or(&current);
            if query != current {
                // Written in a task of its own, after the views' effects and the repaint: a history entry is
                // nothing the user sees change, and `pushState` took a millisecond or more of each change.
                // Entries keep their order (tasks of zero delay run in the order they were set).
                let (target, push) = (query.clone(), previous.is_some());
                leptos::prelude::set_timeout(
                    move || browser::set_query(&target, push),
                    std::time::Duration::ZERO,
                );
            }
            query
        });
        // URL → state on Back/Forward.
        let on_pop = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            let (state, ignored) = ViewState::parse_query(&browser::search());
            ctx.state.set(state);
            ctx.ignored.set(ignored);
            ctx.drop_unknown_values();
        });
        if let Some(window) = browser::window() {
            let _ = window
                .add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
        }
        on_pop.forget();
    }
}
