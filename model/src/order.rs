//! Sorting through one copy of the standard library's sort, so that the browser's WASM carries it once.
//!
//! Every `sort_by` with its own element type or closure is a separate copy of the standard library's sort
//! (about 4 KB of WASM each, before compression), and so is every `collect` into a `BTreeSet` or `BTreeMap`,
//! which sorts its items before building the tree. The app had fifteen such copies. The functions here sort a
//! list of positions ([`sorted_positions`]) with a comparison behind a `dyn` reference, which is one copy for every caller, and then
//! move the items into that order; only the small moving loop is made again for each element type.
//!
//! Floats are the exception: [`sort_floats`] is the standard sort with `f64::total_cmp`, one copy of its own,
//! because the server sorts long columns of them where an indirect comparison would cost time.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Sorts `items` by `compare`, keeping items that compare equal in the order they had (a stable sort).
pub fn sort_stable_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    let mut positions = sorted_positions(items.len(), &|a, b| compare(&items[a], &items[b]));
    permute(items, &mut positions);
}

/// Sorts `items` by the key `key` gives each, stably.
pub fn sort_stable_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_stable_by(items, |a, b| key(a).cmp(&key(b)));
}

/// The distinct items of `items` in ascending order: what collecting into a `BTreeSet` and out again gives,
/// without a tree and without another copy of the sort.
pub fn sorted_distinct<T: Ord>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut items: Vec<T> = items.into_iter().collect();
    // Equal neighbours go before the sort: the callers' items mostly come in cell-key order, where a dimension's
    // value repeats over long stretches (the 61,560 cells of the scale data have about a hundred runs).
    items.dedup();
    sort_stable_by(&mut items, T::cmp);
    items.dedup();
    items
}

/// A `BTreeSet` of `items`, inserted one at a time: `collect` would sort them first, through a copy of the sort
/// of its own for each item type.
pub fn btree_set<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}

/// A `BTreeMap` of `entries`, inserted one at a time (a later entry's value replaces an earlier one's, as with
/// `collect`), for the reason [`btree_set`] gives.
pub fn btree_map<K: Ord, V>(entries: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    map.extend(entries);
    map
}

/// Sorts floats ascending by `f64::total_cmp` (so `-0.0` before `0.0`, and NaN last). Items that compare
/// equal are the same bits, so that this is not a stable sort changes nothing.
pub fn sort_floats(values: &mut [f64]) {
    values.sort_unstable_by(f64::total_cmp);
}

/// The positions `0..len` in the order `compare` puts the items there, ties in ascending position: the order a
/// stable sort would put them in, for callers that want the positions themselves (ranks, Holm's order). This is
/// the one place the sort is instantiated for all of this module's stable sorts.
#[inline(never)]
pub fn sorted_positions(len: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut positions: Vec<usize> = (0..len).collect();
    // Breaking ties by position makes every order total, so the unstable sort (smaller than the stable one,
    // and needing no buffer) gives exactly the stable order.
    positions.sort_unstable_by(|&a, &b| compare(a, b).then(a.cmp(&b)));
    positions
}

/// Moves `items` so that the item at position `i` is the one that was at `positions[i]`, by following each
/// cycle of the permutation with swaps. `positions` is used up as the record of which places are done.
fn permute<T>(items: &mut [T], positions: &mut [usize]) {
    for start in 0..items.len() {
        let mut current = start;
        loop {
            let source = positions[current];
            // A place whose position is its own is final: either it was so from the start or its cycle has
            // already been followed.
            positions[current] = current;
            if source == start {
                break;
            }
            items.swap(current, source);
            current = source;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    // The standard library's sort is what ours is checked against.
    #[allow(clippy::disallowed_methods)]
    #[test]
    fn the_stable_sort_agrees_with_the_standard_one_including_the_order_of_ties() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for len in 0..200usize {
            // Few distinct keys, so that most items tie and the order among ties is tested.
            let items: Vec<(u64, usize)> = (0..len).map(|at| (next() % 5, at)).collect();
            let mut ours = items.clone();
            sort_stable_by_key(&mut ours, |item| item.0);
            let mut standard = items.clone();
            standard.sort_by_key(|item| item.0);
            assert_eq!(ours, standard, "length {len}");
        }
    }

    #[test]
    fn items_that_cannot_be_copied_are_moved_into_order() {
        let mut names: Vec<String> = ["delta", "alpha", "charlie", "alpha", "bravo"]
            .iter()
            .map(|name| name.to_string())
            .collect();
        sort_stable_by(&mut names, |a, b| b.cmp(a));
        assert_eq!(names, ["delta", "charlie", "bravo", "alpha", "alpha"]);
    }

    #[test]
    fn distinct_items_come_out_as_a_btree_set_gives_them() {
        let mut next = xorshift(7);
        let items: Vec<u64> = (0..500).map(|_| next() % 37).collect();
        let expected: Vec<u64> = items
            .iter()
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(sorted_distinct(items), expected);
    }

    #[test]
    fn trees_built_one_entry_at_a_time_equal_collected_ones() {
        let mut next = xorshift(11);
        let entries: Vec<(u64, u64)> = (0..300).map(|at| (next() % 40, at)).collect();
        assert_eq!(
            btree_map(entries.iter().copied()),
            entries.iter().copied().collect::<BTreeMap<_, _>>()
        );
        assert_eq!(
            btree_set(entries.iter().map(|entry| entry.0)),
            entries.iter().map(|entry| entry.0).collect::<BTreeSet<_>>()
        );
    }

    #[test]
    fn floats_sort_by_total_order() {
        let mut values = vec![2.5, f64::NAN, 0.0, -0.0, -1.0, f64::INFINITY, 2.5];
        sort_floats(&mut values);
        let bits: Vec<u64> = values.iter().map(|value| value.to_bits()).collect();
        let expected: Vec<u64> = [-1.0, -0.0, 0.0, 2.5, 2.5, f64::INFINITY, f64::NAN]
            .iter()
            .map(|value: &f64| value.to_bits())
            .collect();
        assert_eq!(bits, expected);
    }
}
