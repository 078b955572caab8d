//! Measures the heap an index and a served snapshot hold, part by part, for the capacity figures of
//! `docs/scale.md`: `cargo run --release -p cellscope --example index_memory -- ROOT [ROOT…]`.
//!
//! A counting allocator wraps the system's: the live bytes are read after indexing (full index: checksums and
//! backup comparisons too, as `serve` holds after its second stage), then each part of the index is dropped in
//! turn and the bytes it gave back are its size; "index in all" is their sum. The snapshot's bodies (Arrow table, JSON bodies, zstd) are
//! measured the same way. Figures are exact heap bytes, not RSS, so the allocator's retained pages and the read
//! buffers of indexing do not blur them.

use cellscope::http::snapshot::Snapshot;
use cellscope_index::{IndexOptions, Quiet};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is updated beside it.
#[allow(unsafe_code)] // a counting allocator must implement the unsafe GlobalAlloc trait.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// Live bytes once the index's background frees (the spent read results) have run.
fn settled() -> isize {
    let mut last = live();
    loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let now = live();
        if now == last {
            return now;
        }
        last = now;
    }
}

/// Drops `part` and returns the bytes that gave back.
fn size_of_dropped<T>(part: T) -> isize {
    let before = live();
    drop(part);
    before - live()
}

/// How many stretches of consecutive rows of one cell the located rows make, file by file: what a locator of
/// spans (first and last offset) instead of one offset per row would hold.
fn row_spans(index: &cellscope_index::Index) -> usize {
    let mut by_file: std::collections::HashMap<&str, Vec<(u64, usize)>> =
        std::collections::HashMap::new();
    for (cell, rows) in index.rows.values().enumerate() {
        let file = by_file.entry(rows.file.as_str()).or_default();
        file.extend(rows.offsets.iter().map(|&offset| (offset, cell)));
    }
    by_file
        .into_values()
        .map(|mut rows| {
            rows.sort_unstable();
            1 + rows
                .windows(2)
                .filter(|pair| pair[0].1 != pair[1].1)
                .count()
        })
        .sum()
}

fn mb(bytes: isize) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn main() -> anyhow::Result<()> {
    let roots: Vec<String> = std::env::args().skip(1).collect();
    anyhow::ensure!(!roots.is_empty(), "usage: index_memory ROOT [ROOT…]");
    println!(
        "| root | runs | cells | request rows located | spans of consecutive rows of one cell | index in all | read buffers kept by the indexing threads | cells (with refill and pre-refill copies) | row locators | provenance | run facts | warnings and ledger | snapshot bodies |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for root in roots {
        let baseline = settled();
        let index = cellscope_index::build(
            std::path::Path::new(&root),
            &IndexOptions::default(),
            &Quiet,
        )?;
        let index_bytes = settled() - baseline;
        let runs = index.runs.len();
        let cells = index.cells.len();
        let rows: usize = index.rows.values().map(|cell| cell.offsets.len()).sum();
        let spans = row_spans(&index);

        // The snapshot: the index plus its encoded bodies. Built from the index, then taken apart again.
        let before_snapshot = live();
        let snapshot = Snapshot::new(index, true).map_err(anyhow::Error::msg)?;
        let bodies_bytes = settled() - before_snapshot;
        let mut index = snapshot.index;

        let cells_bytes = size_of_dropped(std::mem::take(&mut index.cells))
            + size_of_dropped(std::mem::take(&mut index.refill_cells))
            + size_of_dropped(std::mem::take(&mut index.pre_refill_cells));
        let rows_bytes = size_of_dropped(std::mem::take(&mut index.rows));
        let provenance_bytes = size_of_dropped(std::mem::take(&mut index.provenance));
        let runs_bytes = size_of_dropped(std::mem::take(&mut index.runs));
        let other_bytes = size_of_dropped(std::mem::take(&mut index.warnings))
            + size_of_dropped(std::mem::take(&mut index.exclusions));
        let parts_bytes = cells_bytes + rows_bytes + provenance_bytes + runs_bytes + other_bytes;
        // What indexing allocated and kept beyond the index: each thread's read buffer, reused by the next index
        // (a second root in the same process reuses the first one's, so it shows only growth).
        let buffers_bytes = index_bytes - parts_bytes;
        println!(
            "| {root} | {runs} | {cells} | {rows} | {spans} | {} | {} | {} ({:.0} B/cell) | {} ({:.1} B/row) | {} ({:.0} B/cell) | {} ({:.0} B/run) | {} | {} ({:.0} B/cell) |",
            mb(parts_bytes),
            mb(buffers_bytes),
            mb(cells_bytes),
            cells_bytes as f64 / cells as f64,
            mb(rows_bytes),
            rows_bytes as f64 / rows.max(1) as f64,
            mb(provenance_bytes),
            provenance_bytes as f64 / cells as f64,
            mb(runs_bytes),
            runs_bytes as f64 / runs.max(1) as f64,
            mb(other_bytes),
            mb(bodies_bytes),
            bodies_bytes as f64 / cells as f64,
        );
    }
    Ok(())
}
