//! Cyclic bins with a non-negative banded C: the common-mode split.
//!
//! Under cyclic balls-in-bins (one bin j of t drawn once; every step ≡ j (mod t)) with C ≥ 0,
//! the dominating pair is the t-mode Gaussian mixture (1/t)·Σ_j N(μ_j, σ²I) against N(0, σ²I),
//! μ_j = C·x_j with x_j the indicator of bin j's steps (aligned unit gradients: Choquette-Choo,
//! Ganesh, Haque, Steinke, Thakurta, "Near-Exact Privacy Amplification for Matrix Mechanisms",
//! ICLR 2025, arXiv 2410.06266; jax-privacy samples the same pair). Let G be the modes' Gram
//! matrix (t × t). Whenever
//!
//! ```text
//! G ⪯ a²·11ᵀ + s²·I,
//! ```
//!
//! Douglas' lemma gives A with ‖A‖₂ ≤ 1 and μ_j = A·(a·e₀ + s·e_j) for every j. The release is
//! then a post-processing of V = (a, s·e_J) + σZ′ in R^(1+t) (apply A, add independent noise of
//! covariance σ²(I − AAᵀ)), whose first coordinate does not depend on J: one Gaussian
//! mechanism at σ/a (what every bin shares) composed with one round of one-in-t random
//! allocation at σ/s. The operator-norm route is the case a = 0, s² ≥ λmax(G); here s² sits
//! just above the largest eigenvalue of G on 1⊥ and a² is the smallest that makes the
//! difference PSD (a Schur complement), then the whole inequality is verified by a Cholesky
//! factorization with a margin, so rounding cannot make it false.

/// The split: G ⪯ a²·11ᵀ + s²·I for the normalised C (columns of norm ≤ 1).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CommonMode {
    /// The shared part's sensitivity (clipping norms × largest column norm).
    pub a: f64,
    /// The random allocation's sensitivity.
    pub s: f64,
}

/// The most bins (t) and the most work (T × bands) the split is computed for.
const MAX_BINS: u64 = 256;
const MAX_WORK: u64 = 50_000_000;

/// The modes' Gram matrix for a banded Toeplitz C with first column `c` (normalised), T
/// steps, t bins: G[j][k] = Σ ⟨C e_p, C e_p′⟩ over steps p ≡ j, p′ ≡ k (mod t) closer than
/// the bands (every other pair has disjoint rows).
fn gram(c: &[f64], steps: u64, t: usize) -> Vec<Vec<f64>> {
    let b = c.len() as u64;
    let mut g = vec![vec![0.0; t]; t];
    for p in 0..steps {
        for d in 0..b.min(steps - p) {
            let q = p + d;
            // Rows q … min(p + b, T) − 1 hold both columns.
            let end = (p + b).min(steps);
            let ip: f64 = (q..end)
                .map(|i| c[(i - p) as usize] * c[(i - q) as usize])
                .sum();
            let (j, k) = ((p % t as u64) as usize, (q % t as u64) as usize);
            g[j][k] += ip;
            if d > 0 {
                g[k][j] += ip;
            }
        }
    }
    g
}

/// The Cholesky factor L (m − margin·I = L·Lᵀ) of a symmetric matrix; None when it is not
/// positive definite.
fn cholesky(m: &[Vec<f64>], margin: f64) -> Option<Vec<Vec<f64>>> {
    let n = m.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let dot: f64 = l[i][..j].iter().zip(&l[j][..j]).map(|(a, b)| a * b).sum();
            let x = m[i][j] - dot - if i == j { margin } else { 0.0 };
            if i == j {
                if x.is_nan() || x <= 0.0 {
                    return None;
                }
                l[i][i] = x.sqrt();
            } else {
                l[i][j] = x / l[j][j];
            }
        }
    }
    Some(l)
}

/// Solve m·y = r for a symmetric positive definite m (None when it is not).
fn solve(m: &[Vec<f64>], r: &[f64]) -> Option<Vec<f64>> {
    let l = cholesky(m, 0.0)?;
    let n = m.len();
    let mut y = r.to_vec();
    for i in 0..n {
        let dot: f64 = l[i][..i].iter().zip(&y[..i]).map(|(a, b)| a * b).sum();
        y[i] = (y[i] - dot) / l[i][i];
    }
    for i in (0..n).rev() {
        let dot: f64 = (i + 1..n).map(|k| l[k][i] * y[k]).sum();
        y[i] = (y[i] - dot) / l[i][i];
    }
    Some(y)
}

/// The split for a non-negative banded Toeplitz C (first column `c`, normalised to largest
/// column norm 1) over T steps and t bins; None where it does not apply (t < 2, too large, or
/// no split better than the operator norm's is found).
pub fn common_mode(c: &[f64], steps: u64, t: u64) -> Option<CommonMode> {
    if !(2..=MAX_BINS).contains(&t) || steps.saturating_mul(c.len() as u64) > MAX_WORK {
        return None;
    }
    if c.iter().any(|&x| x < 0.0) {
        return None;
    }
    split(gram(c, steps, t as usize))
}

/// The split for a non-negative lower-triangular Toeplitz C given by its whole first column
/// `c` (BLT: c(m) for m < T, normalised), over T = `c.len()` steps and t bins.
pub fn common_mode_toeplitz(c: &[f64], t: u64) -> Option<CommonMode> {
    let steps = c.len() as u64;
    if !(2..=MAX_BINS).contains(&t) || steps.saturating_mul(t * t) > MAX_WORK {
        return None;
    }
    if c.iter().any(|&x| x < 0.0) {
        return None;
    }
    // Row i of mode j: Σ c(m) over m ≤ i with i − m ≡ j (mod t), the running sums S[r] of
    // c over m ≡ r; each row adds its outer product to G.
    let n = t as usize;
    let (mut sums, mut g) = (vec![0.0; n], vec![vec![0.0; n]; n]);
    let mut row = vec![0.0; n];
    for (i, &ci) in c.iter().enumerate() {
        sums[i % n] += ci;
        for (j, x) in row.iter_mut().enumerate() {
            *x = sums[(i + n - j % n) % n];
        }
        add_outer(&mut g, &row);
    }
    split(g)
}

/// The split for binary-tree aggregation (C: one row per complete dyadic block, ones on its
/// steps; normalised by `top`, its largest column norm) over T steps and t bins.
pub fn common_mode_tree(steps: u64, t: u64, top: f64) -> Option<CommonMode> {
    if !(2..=MAX_BINS).contains(&t) || steps.saturating_mul(2 * t * t) > MAX_WORK {
        return None;
    }
    let n = t as usize;
    let mut g = vec![vec![0.0; n]; n];
    let mut row = vec![0.0; n];
    let mut w = 1u64;
    while w <= steps {
        for a in 0..steps / w {
            // The block's steps a·w … (a + 1)·w − 1 in each bin.
            for (j, x) in row.iter_mut().enumerate() {
                let below = |y: u64| (y + t - 1 - j as u64) / t;
                *x = (below((a + 1) * w) - below(a * w)) as f64 / top;
            }
            add_outer(&mut g, &row);
        }
        w *= 2;
    }
    split(g)
}

/// g += r·rᵀ.
fn add_outer(g: &mut [Vec<f64>], r: &[f64]) {
    for (gi, &ri) in g.iter_mut().zip(r) {
        if ri != 0.0 {
            for (x, &rj) in gi.iter_mut().zip(r) {
                *x += ri * rj;
            }
        }
    }
}

/// The split of the modes' Gram matrix `g` (t × t, t ≥ 2).
fn split(g: Vec<Vec<f64>>) -> Option<CommonMode> {
    let n = g.len();
    let t = n as u64;
    // Householder reflection H (H·u = e₀, u = 1/√t): K = H·G·H has K[0][0] = uᵀGu, its
    // first column below the diagonal the coupling of u to 1⊥, and G₁₁ = K[1..][1..] the
    // restriction of G to 1⊥.
    let u = 1.0 / (t as f64).sqrt();
    let mut v = vec![u; n];
    v[0] -= 1.0;
    let vv: f64 = v.iter().map(|x| x * x).sum();
    let beta = 2.0 / vv;
    let p: Vec<f64> = g
        .iter()
        .map(|row| beta * row.iter().zip(&v).map(|(a, b)| a * b).sum::<f64>())
        .collect();
    let kk = 0.5 * beta * v.iter().zip(&p).map(|(a, b)| a * b).sum::<f64>();
    let z: Vec<f64> = p.iter().zip(&v).map(|(p, v)| p - kk * v).collect();
    let k: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| g[i][j] - v[i] * z[j] - z[i] * v[j])
                .collect()
        })
        .collect();
    let (g00, g01) = (k[0][0], &k[0][1..]);
    let g11: Vec<Vec<f64>> = k[1..].iter().map(|r| r[1..].to_vec()).collect();
    // λmax(G₁₁) by bisection on positive definiteness, from Gershgorin's bound down.
    let shifted = |s2: f64| -> Vec<Vec<f64>> {
        (0..n - 1)
            .map(|i| {
                (0..n - 1)
                    .map(|j| if i == j { s2 - g11[i][j] } else { -g11[i][j] })
                    .collect()
            })
            .collect()
    };
    let (mut lo, mut hi) = (
        0.0f64,
        g.iter()
            .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
            .fold(0.0, f64::max),
    );
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if cholesky(&shifted(mid), 0.0).is_some() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    // s² a little above it (a² grows without bound as s² comes down to it when u couples to
    // its eigenvector); a² from the Schur complement of the s²·I − G₁₁ block.
    let s2 = hi * (1.0 + 1e-3);
    let y = solve(&shifted(s2), g01)?;
    let a2t = g00 + g01.iter().zip(&y).map(|(a, b)| a * b).sum::<f64>() - s2;
    // Rounded up, then checked as a whole in the original coordinates, with a margin.
    let (a2, s2) = (
        (a2t.max(0.0) / t as f64) * (1.0 + 1e-6) + 1e-12 * s2,
        s2 * (1.0 + 1e-9),
    );
    let m: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| a2 + if i == j { s2 } else { 0.0 } - g[i][j])
                .collect()
        })
        .collect();
    cholesky(&m, 1e-12 * s2)?;
    // A negligible shared part folds into s (a²·11ᵀ ⪯ a²·t·I): the random allocation alone.
    let (a2, s2) = if a2 * (t as f64) < 1e-6 * s2 {
        (0.0, s2 + a2 * t as f64)
    } else {
        (a2, s2)
    };
    Some(CommonMode {
        a: a2.sqrt(),
        s: s2.sqrt(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The identity: the modes are orthogonal with ⌈T/t⌉ steps each, so G = (T/t)·I when t
    /// divides T: s² = T/t and no shared part (a² ≈ 0).
    #[test]
    fn the_identity_has_no_common_mode() {
        let m = common_mode(&[1.0], 100, 10).unwrap();
        assert!((m.s * m.s - 10.0).abs() < 0.02 && m.a < 1e-4, "{m:?}");
    }

    /// A constant positive coupling: G = (T/t)·(I + ρ·(11ᵀ − I)) for a wrap-around band, so
    /// a² ≈ (T/t)·ρ and s² ≈ (T/t)·(1 − ρ) once the boundary is negligible.
    #[test]
    fn a_band_splits_off_what_every_bin_shares() {
        // Two bands [1, 1]/√2 over t = 2 bins: neighbours share half a column each.
        let h = 1.0 / 2f64.sqrt();
        let m = common_mode(&[h, h], 10_000, 2).unwrap();
        let g = gram(&[h, h], 10_000, 2);
        // G ≈ 5000·[[1, 1], [1, 1]] (the two bins' columns overlap fully in pairs).
        assert!((g[0][1] / g[0][0] - 1.0).abs() < 1e-3, "{g:?}");
        assert!(m.a * m.a * 2.0 + m.s * m.s >= g[0][0] + g[0][1], "{m:?}");
        assert!(m.s * m.s < 0.01 * g[0][0], "{m:?}");
    }
}
