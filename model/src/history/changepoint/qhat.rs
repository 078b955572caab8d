//! The divisive step's candidate in a window: the split maximising Matteson and James' Q-hat statistic over
//! |x − y| distances, computed as the reference implementation computes it (its cumulative sums, its order of
//! operations, numpy's first maximum), so equal Q-hats resolve to the same point.

use super::sum;

/// A candidate split: the first point after it, relative to the window, and its Q-hat.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Candidate {
    pub index: usize,
    pub qhat: f64,
}

/// The distances of one window and their precomputed sums.
pub(super) struct Distances {
    n: usize,
    /// `d[i * n + j]` = |x_i − x_j|.
    d: Vec<f64>,
    /// `h[r * (n − 1) + c]` = Σ_{k = r + 1}^{c + 1} d(r, k), added left to right (0 when c < r).
    h: Vec<f64>,
    /// `v[c]` = Σ_{r = 0}^{c} d(r, c + 1), added top to bottom.
    v: Vec<f64>,
}

impl Distances {
    /// The distances between every two values of `window` (at least two).
    pub(super) fn new(window: &[f64]) -> Distances {
        let n = window.len();
        let d: Vec<f64> = window
            .iter()
            .flat_map(|x| window.iter().map(move |y| (x - y).abs()))
            .collect();
        let side = n - 1;
        let mut h = vec![0.0; side * side];
        for r in 0..side {
            let mut running = 0.0;
            for c in r..side {
                running += d[r * n + c + 1];
                h[r * side + c] = running;
            }
        }
        let v = (0..side)
            .map(|c| (0..=c).fold(0.0, |total, r| total + d[r * n + c + 1]))
            .collect();
        Distances { n, d, h, v }
    }

    /// The best split of `window[start..end]` (at least two values): the row-major first maximum of Q(τ, κ) over
    /// start < τ < κ ≤ end, or the first NaN, as `np.argmax` picks.
    pub(super) fn candidate(&self, start: usize, end: usize) -> Candidate {
        let m = end - 1 - start;
        let v = self.local_v(start, m);
        let cumulative_v: Vec<f64> = v
            .iter()
            .scan(0.0, |total, value| {
                *total += value;
                Some(*total)
            })
            .collect();
        let below = self.sums_below(start, m);
        let mut column_h = vec![0.0; m];
        let mut best = Candidate {
            index: start + 1,
            qhat: f64::NEG_INFINITY,
        };
        for i in 0..m {
            for (j, total) in column_h.iter_mut().enumerate() {
                *total += self.hl(start, i, j);
            }
            for (j, column) in column_h.iter().enumerate() {
                let q = q_value(i, j, m, *column, &cumulative_v, &below);
                if q.is_nan() {
                    return Candidate {
                        index: start + 1 + i,
                        qhat: q,
                    };
                }
                if q > best.qhat || (i == 0 && j == 0) {
                    best = Candidate {
                        index: start + 1 + i,
                        qhat: q,
                    };
                }
            }
        }
        best
    }

    /// H restricted to the interval: `h[start + a][start + b]`.
    fn hl(&self, start: usize, a: usize, b: usize) -> f64 {
        self.h[(start + a) * (self.n - 1) + start + b]
    }

    /// V of the interval: `v[start + a]` less the distances from the values before `start`, summed down each
    /// column (numpy sums a lone column pairwise).
    fn local_v(&self, start: usize, m: usize) -> Vec<f64> {
        let column = |a: usize| (0..start).map(move |r| self.d[r * self.n + start + 1 + a]);
        (0..m)
            .map(|a| {
                let above = if m == 1 {
                    sum::pairwise(&column(a).collect::<Vec<_>>())
                } else {
                    column(a).fold(0.0, |total, value| total + value)
                };
                self.v[start + a] - above
            })
            .collect()
    }

    /// `below[a][b]` = Σ_{r = a}^{m − 2} H(r + 1, b + 1), added from the bottom row up.
    fn sums_below(&self, start: usize, m: usize) -> Vec<Vec<f64>> {
        let rows = m.saturating_sub(1);
        let mut below = vec![vec![0.0; rows]; rows];
        for a in (0..rows).rev() {
            let (upper, lower) = below.split_at_mut(a + 1);
            let next = lower.first();
            for (b, cell) in upper[a].iter_mut().enumerate() {
                let here = self.hl(start, a + 1, b + 1);
                *cell = next.map_or(here, |next| next[b] + here);
            }
        }
        below
    }
}

/// Q at row `i`, column `j` of the m × m matrix (τ = start + i + 1, κ = start + j + 2): A − B − C, each a
/// coefficient times a sum, zero below the diagonal (C also on it), exactly as the reference's matrices hold them.
fn q_value(
    i: usize,
    j: usize,
    m: usize,
    column_h: f64,
    cumulative_v: &[f64],
    below: &[Vec<f64>],
) -> f64 {
    let ratio = |numerator: usize, denominator: usize| numerator as f64 / denominator as f64;
    let shift = if i >= 1 { cumulative_v[i - 1] } else { 0.0 };
    let a = ratio(2, j + 2) * if j >= i { column_h - shift } else { 0.0 };
    let b = if i >= 1 && j >= 1 {
        let coefficient = if j >= i {
            ratio(2 * (j - i + 1), (j + 2) * i)
        } else {
            0.0
        };
        coefficient * cumulative_v[i - 1]
    } else {
        0.0
    };
    let c = if i + 1 < m && j >= 1 {
        let coefficient = if j > i {
            ratio(2 * (i + 1), (j + 2) * (j - i))
        } else {
            0.0
        };
        coefficient * below[i][j - 1]
    } else {
        0.0
    };
    a - b - c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q(τ, κ) from its definition: 2/(m+n) Σ|X−Y| − 2m/((m+n)(n−1)) Σ_{i<k}|X_i−X_k| − 2n/((m+n)(m−1))
    /// Σ_{j<k}|Y_j−Y_k|, X = x[start..τ] (n values), Y = x[τ..κ] (m values), a term 0 when its n − 1 or m − 1 is.
    fn q_by_definition(x: &[f64], start: usize, tau: usize, kappa: usize) -> f64 {
        let (left, right) = (&x[start..tau], &x[tau..kappa]);
        let (n, m) = (left.len() as f64, right.len() as f64);
        let between: f64 = left
            .iter()
            .flat_map(|a| right.iter().map(move |b| (a - b).abs()))
            .sum();
        let within = |piece: &[f64]| -> f64 {
            (0..piece.len())
                .flat_map(|i| (i + 1..piece.len()).map(move |k| (i, k)))
                .map(|(i, k)| (piece[i] - piece[k]).abs())
                .sum()
        };
        let term = |count: f64, other: f64, sum: f64| {
            if other > 1.0 {
                2.0 * count / (m + n) / (other - 1.0) * sum
            } else {
                0.0
            }
        };
        2.0 / (m + n) * between - term(m, n, within(left)) - term(n, m, within(right))
    }

    #[test]
    fn the_candidate_maximises_q_as_defined() {
        let x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0];
        let distances = Distances::new(&x);
        for (start, end) in [(0, 12), (0, 5), (3, 12), (4, 7), (10, 12)] {
            let mut best = (start + 1, f64::NEG_INFINITY);
            for tau in start + 1..end {
                for kappa in tau + 1..=end {
                    let q = q_by_definition(&x, start, tau, kappa);
                    if q > best.1 + 1e-9 {
                        best = (tau, q);
                    }
                }
            }
            let got = distances.candidate(start, end);
            assert_eq!(got.index, best.0, "[{start}, {end})");
            assert!(
                (got.qhat - best.1).abs() < 1e-9,
                "[{start}, {end}): {got:?} vs {best:?}"
            );
        }
    }

    #[test]
    fn a_constant_window_splits_after_its_first_value() {
        // Every Q is 0: numpy's argmax takes the first, τ = start + 1.
        let distances = Distances::new(&[2.0; 9]);
        assert_eq!(
            distances.candidate(0, 9),
            Candidate {
                index: 1,
                qhat: 0.0
            }
        );
        assert_eq!(
            distances.candidate(4, 9),
            Candidate {
                index: 5,
                qhat: 0.0
            }
        );
    }
}
