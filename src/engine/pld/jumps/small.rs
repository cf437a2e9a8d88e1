//! The closed form's small pair: the lattice part of the rare-large-loss decomposition.

use super::*;
use crate::engine::math::{exp, exp_m1};
use crate::engine::pld::compose::Work;

/// Append grow(last point) to `grid` until its last point reaches `top`.
pub(super) fn extend_to(grid: &mut Vec<f64>, top: f64, grow: impl Fn(f64) -> f64) {
    while let Some(&v) = grid.last().filter(|&&v| v < top) {
        grid.push(grow(v));
    }
}

/// The x above which P puts at most e^{ln_p} (bisection; P's tail falls in x).
pub(super) fn x_with_tail(q: f64, sigma: f64, ln_p: f64) -> f64 {
    let tail = |x: f64| ln_p_between(q, sigma, x, f64::INFINITY);
    let (_, hi) = bisect(
        (0.0, 1.0 + 40.0 * sigma),
        |x| tail(x) > ln_p,
        200,
        |a, b| b - a <= 1e-12 * b.abs().max(1.0),
    );
    hi
}

/// The compositions of the small pair read so far, and the one step's split.
pub(super) struct Small {
    pub(super) q: f64,
    pub(super) sigma: f64,
    pub(super) t: f64,
    /// ln(1 − q): the least loss; ℓ_top = L(x_top): the first loss of the big part.
    pub(super) floor: f64,
    pub(super) l_top: f64,
    pub(super) x_top: f64,
    /// The last bin's end (beyond it the big part's mass is charged at H = 1).
    pub(super) l_max: f64,
    /// R₃ (an upper bound).
    pub(super) r3: f64,
    /// A lower bound on the small pair's composed Q-mass, Q(x ≤ x_top)^{T−1}, and on its
    /// P-mass, P(x ≤ x_top)^{T−1}.
    pub(super) mq: f64,
    pub(super) mp: f64,
    /// An upper bound on P(x ≤ x_top)^{T−1}.
    pub(super) mp_hi: f64,
    pub(super) comps: Vec<Composed>,
    /// The big part's mass p_b (upper), and T·(−ln(1 − q)) (the add pair's largest loss).
    pub(super) p_b: f64,
    pub(super) add_top: f64,
    /// The big part on bins for the add pair's term with one big step ([`Small::add_delta`]):
    /// each bin's least loss (taken low) and T·(its Q-mass) (taken high), the last bin
    /// running to +∞; one bin until [`Small::bin_big`].
    pub(super) big: Vec<(f64, f64)>,
    /// The small pair's reversed compositions (δ_rev(ε') = E[(e^{−S} − e^{ε'})₊], upper).
    pub(super) revs: Vec<Composed>,
    /// Most bins over the fine part of the loss range ([`MAX_BINS`] or [`DELTA_BINS`]).
    pub(super) max_bins: f64,
}

impl Small {
    /// H(y): (upper, lower). Below the compositions' windows a tilted read charges the moment
    /// removed below them at e^{−λy}, which grows without bound as y falls; there
    /// H(y) = M_P − e^y·M_Q + e^y·δ_rev(−y) (as (1 − e^{−u})₊ = 1 − e^{−u} + (e^{−u} − 1)₊), with
    /// M_P ≤ 1, M_Q ≥ `mq` and δ_rev read from the reversed composition, is the upper end.
    pub(super) fn h(&self, y: f64) -> (f64, f64) {
        let mut up = 1.0f64;
        let mut lo = 0.0f64;
        for c in &self.comps {
            let (u, l) = c.delta(y);
            up = up.min(u);
            lo = lo.max(l);
        }
        if y < 0.0 {
            let e = exp(y);
            up = up.min(-exp_m1(y) + e * (1.0 - self.mq) + e * self.rev(-y));
        }
        (up, lo.min(up))
    }

    /// δ_rev(ε') of the T − 1 small steps: the least upper end of the reversed compositions,
    /// and 0 from ε' = T·(−ln(1 − q)) on (`add_top`): a step's loss is ≥ ln(1 − q), so
    /// e^{−S} ≤ e^{(T−1)·(−ln(1 − q))} < e^{ε'} there. (The reversed compositions' windows end
    /// before that, where their ledger's charge reads 1: at q = 1.439e-9, σ = 0.3304,
    /// T = 6,498,578, δ = 8.97e-10 — less than one sampled step, ε ≈ 0.438 decided by one big
    /// loss — H(ε − ℓ) was read as 1 for every big loss ℓ ≥ ε + 1 where it is 1 − e^{ε−ℓ}, and
    /// the bracket [0.4378, 0.6632] was refused.)
    pub(super) fn rev(&self, eps: f64) -> f64 {
        if eps >= self.add_top {
            return 0.0;
        }
        (self.revs.iter().map(|r| r.delta(eps).0)).fold(1.0f64, f64::min)
    }

    /// An upper bound on the add pair's δ at ε: δ_add(ε) = E_P[(e^{−L_T} − e^ε)₊] (the remove
    /// pair's composed loss, reversed). Split as δ is: the distinguished small step's loss is
    /// ≥ ln(1 − q), and a big step's loss ℓ lowers e^{−L} by e^{−ℓ}, so its term is
    /// T·∫ e^{−ℓ}·δ_rev(ε + ℓ) dμ_b(ℓ) = T·∫ δ_rev(ε + ℓ) dQ (e^{−L}dP = dQ), read on the big
    /// part's bins at each bin's least loss (δ_rev falls):
    ///   δ_add(ε) ≤ δ_rev(ε + ln(1 − q))/(1 − q) + Σ_bins T·Q(bin)·δ_rev(ε + ℓ_a)
    ///            + C(T, 2)·p_b²·e^{−ℓ_top}·δ_rev(ε + ℓ_top)/(1 − p_b) + R₃
    /// (two big steps lower e^{−L} by e^{−2ℓ_top} at least, and the T − 2-fold small pair's
    /// δ_rev(z) is at most e^{ℓ_top}·δ_rev(z − ℓ_top)/(1 − p_b): one more small step's loss is
    /// ≤ ℓ_top; a term with k ≥ 3 big steps is at most C(T, k)·p_b^k·E_{μ_s^{∗(T−k)}}[e^{−S}],
    /// and E_{μ_s}[e^{−L}] = Q(x ≤ x_top) ≤ 1). The term with one big step was charged at
    /// T·p_b·δ_rev(ε) (ℓ ≥ 0): at q = 6.214e-7, σ = 0.5486, T = 69,744,471, δ = 0.0077, where
    /// T·p_b = 0.018 (the cube-root rule) and ℓ_top = 0.0098 is of the order of ε, that was
    /// 1.8 % of δ, the add pair's upper end read 0.006918 above the remove pair's
    /// [0.006730, 0.006812], and the run was refused.
    pub(super) fn add_delta(&self, eps: f64) -> f64 {
        let l1q = self.floor;
        let pairs = self.c2() * self.p_b * self.p_b * exp(-self.l_top);
        let one: f64 = (self.big.iter()).map(|&(l, m)| m * self.rev(eps + l)).sum();
        (self.rev(eps + l1q) * exp(-l1q) + one + pairs * self.rev(eps + self.l_top) + self.r3)
            * (1.0 + 1e-12)
    }

    /// The big part on bins for [`Small::add_delta`] (where its one bin does not rule the add
    /// pair out): from ℓ_top, BIG_BINS_PER_SPREAD a spread `s0` of the small pair's
    /// composition (δ_rev(ε + ℓ) falls on that scale) over BIG_SPREADS spreads, then each
    /// BIG_GROW wider, to ℓ_max; the last bin runs to +∞. False (one bin kept) where the
    /// call's work is spent.
    pub(super) fn bin_big(&mut self, s0: f64, w: &Work) -> bool {
        let width = s0 / BIG_BINS_PER_SPREAD;
        let (l_top, fine_end) = (self.l_top, self.l_top + BIG_SPREADS * s0);
        let mut ends = vec![l_top];
        extend_to(&mut ends, self.l_max, |l| {
            l + if l < fine_end {
                width
            } else {
                width.max(BIG_GROW * (l - l_top))
            }
        });
        if !w.spend(MASS_WORK * ends.len() as f64) {
            return false;
        }
        let (q, sigma) = (self.q, self.sigma);
        let mut xa = self.x_top;
        self.big.clear();
        for (i, &la) in ends.iter().enumerate() {
            let xb = match ends.get(i + 1) {
                Some(&lb) => x_of_loss(q, sigma, lb),
                None => f64::INFINITY,
            };
            let (_, ln_q) = ln_pq_between(q, sigma, xa, xb);
            xa = xb;
            if ln_q > f64::NEG_INFINITY {
                // (A bin's least loss moved down for the rounding of its x.)
                let l = la * (1.0 - 1e-12) - 1e-18;
                self.big.push((l, self.t * exp(ln_q) * (1.0 + MASS_MARGIN)));
            }
        }
        true
    }

    /// C(T, 2)/(1 − p_b), taken high: the weight of the term with two big steps.
    pub(super) fn c2(&self) -> f64 {
        0.5 * self.t * (self.t - 1.0) / (1.0 - self.p_b) * (1.0 + 1e-12)
    }

    /// The add pair's certified upper ε at δ from the reversed compositions read so far: an ε
    /// whose bound is ≤ δ (bisection keeps one), at most `add_top` (δ_add = 0 from there on).
    pub(super) fn add_upper(&self, delta: f64) -> f64 {
        if self.revs.is_empty() || self.add_delta(self.add_top) > delta {
            return self.add_top;
        }
        if self.add_delta(0.0) <= delta {
            return 0.0;
        }
        bisect(
            (0.0, self.add_top),
            |e| self.add_delta(e) > delta,
            100,
            |x, y| y - x <= 1e-9 * y,
        )
        .1
    }

    /// The bins' loss breakpoints for reads at ε: spacing `dd` (or wider, to keep within
    /// MAX_BINS) up to where H levels off (`flat`: ε − ℓ below it), then widening by 1 % a bin
    /// to ℓ_max, with ℓ_top among them.
    pub(super) fn breakpoints(&self, eps: f64, dd: f64, flat: f64) -> Vec<f64> {
        let (fine_end, dd) = self.fine_part(eps, dd, flat);
        let mut pts = vec![self.floor];
        let mut l = self.floor;
        while l < self.l_max {
            let step = if l < fine_end {
                dd
            } else {
                dd.max(0.01 * (l - fine_end))
            };
            let next = (l + step).min(self.l_max);
            if l < self.l_top && next > self.l_top {
                pts.push(self.l_top);
            }
            pts.push(next);
            l = next;
        }
        pts
    }

    /// The fine part of the loss range for reads at ε ([`Small::breakpoints`]): where it ends,
    /// and its bins' width (`dd`, or wider to keep within `max_bins`).
    pub(super) fn fine_part(&self, eps: f64, dd: f64, flat: f64) -> (f64, f64) {
        let fine_end = (eps - flat).max(self.floor + dd);
        (fine_end, dd.max((fine_end - self.floor) / self.max_bins))
    }

    /// ν on the bins for reads at ε and below: each bin's loss ends and its mass (times T
    /// above ℓ_top), and the upper sum's part beyond the last bin; None once the call's work
    /// is spent. The masses are the costly part (four erfc a bin), so a bisection builds them
    /// once, for the largest ε it reads: finer bins than a smaller ε needs only tighten it.
    pub(super) fn bins(&self, eps: f64, dd: f64, flat: f64, w: &Work) -> Option<Bins> {
        let pts = self.breakpoints(eps, dd, flat);
        if !w.spend(MASS_WORK * pts.len() as f64) {
            return None;
        }
        // (ℓ_top's own boundary is the lattice's, so that the two parts partition the line.)
        let x_of = |l: f64| {
            if l == self.l_top {
                self.x_top
            } else if l <= self.floor {
                f64::NEG_INFINITY
            } else {
                x_of_loss(self.q, self.sigma, l)
            }
        };
        let mut bins = Vec::with_capacity(pts.len());
        let mut xa = x_of(pts[0]);
        for w in pts.windows(2) {
            let (la, lb) = (w[0], w[1]);
            let xb = x_of(lb);
            let (ln_p, ln_q) = ln_pq_between(self.q, self.sigma, xa, xb);
            xa = xb;
            if ln_p == f64::NEG_INFINITY {
                continue;
            }
            let weight = if la >= self.l_top { self.t } else { 1.0 };
            bins.push((la, lb, weight * exp(ln_p), weight * exp(ln_q)));
        }
        let far = exp(ln_p_between(
            self.q,
            self.sigma,
            x_of(self.l_max),
            f64::INFINITY,
        )) * (1.0 + MASS_MARGIN);
        // The term with two big steps: μ_b on a grid above ℓ_top — spacing g over ε's range,
        // then each point PAIR_GROW past the last, to ℓ_max — each bin's mass at the grid point
        // at or above its top; the pairs' sums, each rounded up onto a grid of the same
        // make from 2ℓ_top, by direct convolution; μ_b beyond ℓ_max (`far`) charged with
        // every partner at H = 1. (Charged there from ε's range on, the pairs with a loss past
        // it were 1.9 % of δ at q = 1e-8, σ = 0.32, T = 2·10⁸, δ = 1e-3, where one such pair
        // reads H ≈ 0.1: the bracket was 2 % wide and refused.)
        let g = eps.max(self.l_top) / PAIR_POINTS as f64;
        let grow = |v: f64| v + (PAIR_GROW * v).max(g);
        let mut ends: Vec<f64> = (1..=PAIR_POINTS)
            .map(|i| self.l_top + i as f64 * g)
            .collect();
        extend_to(&mut ends, self.l_max, grow);
        let mut grid = vec![0.0f64; ends.len()];
        // For the lower sum: each bin's mass (taken low) at the grid point at or below its
        // bottom (ℓ_top, then the ends); beyond the last end, left out.
        let mut grid_lo = vec![0.0f64; ends.len()];
        let mut past = far;
        for &(la, lb, p, _) in &bins {
            if la < self.l_top {
                continue;
            }
            let m = p / self.t * (1.0 + MASS_MARGIN);
            let top = lb * (1.0 + 1e-12) + 1e-18;
            match grid.get_mut(ends.partition_point(|&e| e < top)) {
                Some(v) => *v += m,
                None => past += m,
            }
            let bottom = la * (1.0 - 1e-12) - 1e-18;
            let i = ends.partition_point(|&e| e <= bottom);
            if let Some(v) = grid_lo.get_mut(i) {
                *v += p / self.t * (1.0 - MASS_MARGIN);
            }
        }
        // Sums: index i + j for two points of the uniform part (2ℓ_top + (i + j + 2)g), the
        // first grid point at or above the sum otherwise.
        let mut sums: Vec<f64> = (0..2 * PAIR_POINTS - 1)
            .map(|k| 2.0 * self.l_top + (k as f64 + 2.0) * g)
            .collect();
        let last = 2.0 * ends.last().copied().unwrap_or(self.l_top);
        extend_to(&mut sums, last, grow);
        let live: Vec<(usize, f64)> = (grid.iter().copied().enumerate())
            .filter(|(_, a)| *a > 0.0)
            .collect();
        if !w.spend(PAIR_WORK * (live.len() * live.len()) as f64) {
            return None;
        }
        let c2 = self.c2() * (1.0 + 1e-12 * grid.len() as f64);
        let mut pairs = vec![0.0f64; sums.len()];
        // (For one i the sums grow with j, so the first sum at or above each is found by walking
        // on from the last one: the same index a binary search finds, without its cost — that
        // search was 0.6 s of the 1.5 s of q = 4.845e-9, σ = 0.4324, T = 4.5·10⁸, δ = 4.1e-14.)
        for &(i, a) in &live {
            let mut walk = None;
            for &(j, b) in &live {
                let k = if i < PAIR_POINTS && j < PAIR_POINTS {
                    i + j
                } else {
                    let sum = ends[i] + ends[j];
                    let mut k = walk.unwrap_or_else(|| sums.partition_point(|&s| s < sum));
                    while k < sums.len() && sums[k] < sum {
                        k += 1;
                    }
                    walk = Some(k);
                    k
                };
                pairs[k.min(sums.len() - 1)] += c2 * a * b;
            }
        }
        let pairs = (sums.iter().copied().zip(pairs))
            .filter(|(_, m)| *m > 0.0)
            .collect();
        // The lower sum's pairs: point i of grid_lo sits at start(i) (ℓ_top, then ends[i − 1]),
        // a pair's sum rounded down onto a grid of the same make from 2ℓ_top (2ℓ_top + kg for
        // two points of the uniform part, i, j ≤ PAIR_POINTS: index i + j), weight C(T, 2)
        // taken low.
        let start = |i: usize| if i == 0 { self.l_top } else { ends[i - 1] };
        let c2_lo = 0.5 * self.t * (self.t - 1.0) * (1.0 - 1e-12 * grid.len() as f64);
        let mut low_sums: Vec<f64> = (0..=2 * PAIR_POINTS)
            .map(|k| 2.0 * self.l_top + k as f64 * g)
            .collect();
        extend_to(&mut low_sums, last, grow);
        let live_lo: Vec<(usize, f64)> = (grid_lo.iter().copied().enumerate())
            .filter(|(_, a)| *a > 0.0)
            .collect();
        if !w.spend(PAIR_WORK * (live_lo.len() * live_lo.len()) as f64) {
            return None;
        }
        let mut lows = vec![0.0f64; low_sums.len()];
        for &(i, a) in &live_lo {
            // (The last sum at or below each, walked on as above.)
            let mut walk = None;
            for &(j, b) in &live_lo {
                let k = if i <= PAIR_POINTS && j <= PAIR_POINTS {
                    i + j
                } else {
                    let sum = start(i) + start(j);
                    let mut k = walk.unwrap_or_else(|| low_sums.partition_point(|&s| s <= sum));
                    while k < low_sums.len() && low_sums[k] <= sum {
                        k += 1;
                    }
                    walk = Some(k);
                    k - 1
                };
                lows[k.min(low_sums.len() - 1)] += c2_lo * a * b;
            }
        }
        let pairs_lo = (low_sums.into_iter().zip(lows))
            .filter(|(_, m)| *m > 0.0)
            .collect();
        // H_{T−2}(z) ≥ H(z + τ) − p_τ: one more small step adds at most τ to the loss but on
        // its losses past τ (P-mass p_τ, where H_{T−2} ≤ 1); τ = g.
        let tau = g;
        let p_tau = if tau < self.l_top {
            exp(ln_p_between(
                self.q,
                self.sigma,
                x_of_loss(self.q, self.sigma, tau),
                self.x_top,
            )) * (1.0 + MASS_MARGIN)
        } else {
            0.0
        };
        Some(Bins {
            bins,
            pairs,
            pairs_lo,
            tau,
            p_tau,
            beyond: self.t * far + self.r3 + 2.0 * c2 * past * (grid.iter().sum::<f64>() + past),
        })
    }

    /// (upper, lower) bounds on δ(ε) from `bins` (built for this ε or a larger one); None
    /// once the call's work is spent.
    pub(super) fn read(&self, bins: &Bins, eps: f64, w: &Work) -> Option<(f64, f64)> {
        // Bins from `closed` on lie past ε + T·(−ln(1 − q)), where δ_rev is 0 and H is in
        // closed form: no read of H there.
        let closed =
            (bins.bins).partition_point(|b| b.0 * (1.0 - 1e-12) - 1e-18 - eps < self.add_top);
        let work = READ_WORK * (closed + bins.pairs.len()) as f64
            + CLOSED_WORK * (bins.bins.len() - closed) as f64;
        if !w.spend(work) {
            return None;
        }
        let (mut up, mut lo) = (0.0f64, 0.0f64);
        let e_eps = exp(eps);
        // The last bin's top, the point its upper end was read at and H's lower end there.
        let mut last: Option<(f64, f64, f64)> = None;
        for (i, &(la, lb, p, pq)) in bins.bins.iter().enumerate() {
            let (p_up, p_lo) = (p * (1.0 + MASS_MARGIN), p * (1.0 - MASS_MARGIN));
            let (mut u, mut l) = (f64::INFINITY, 0.0f64);
            if i < closed {
                // H(ε − ℓ) rises with ℓ: its upper end at the bin's top, its lower end at the
                // bottom (each moved outwards for the rounding of a breakpoint's x and loss).
                let y_up = eps - lb - 1e-12 * lb.abs() - 1e-18;
                let y_lo = eps - la + 1e-12 * la.abs() + 1e-18;
                let (h_up, h_lo_there) = self.h(y_up);
                let h_lo = match last {
                    // Where the bin starts at the last one's top, its lower end comes from the
                    // read there, at y a few 10⁻¹² below y_lo: H(y) = E_P[(1 − e^{y−S})₊] falls
                    // at rate e^y·Q(S > y) ≤ e^y, so H(y_lo) ≥ H(y) − e^{y_lo}·(y_lo − y)
                    // (half of the reads of H in a closed-form run's search).
                    Some((top, y, h)) if top == la && y <= y_lo => {
                        (h - exp(y_lo) * (y_lo - y) * (1.0 + 1e-9)).max(0.0)
                    }
                    _ => self.h(y_lo).1,
                };
                last = Some((lb, y_up, h_lo_there));
                u = p_up * h_up;
                l = p_lo * h_lo;
            }
            let over = la * (1.0 - 1e-12) - 1e-18 - eps;
            if over > 0.0 {
                // Every loss of the bin is above ε: H(ε − ℓ) = M_P − e^{ε−ℓ}·M_Q +
                // e^{ε−ℓ}·δ_rev(ℓ − ε), and e^{−ℓ}dP = dQ, so over the bin
                //   ∫ H dν ≤ M_P·P_i − e^ε·M_Q·Q_i + e^ε·Q_i·δ_rev(ℓ_a − ε)
                //   ∫ H dν ≥ M_P·P_i − e^ε·Q_i      (M_Q ≤ 1)
                // (P_i, Q_i its masses times its weight): exact but for the bounds on M_P, M_Q
                // and δ_rev, which is 0 past T·(−ln(1 − q)). (Read at its ends, H(ε − ℓ) for
                // ℓ ≥ ε + 1 came out 1 where it is 1 − e^{ε−ℓ}: `rev`'s docs.)
                let (q_up, q_lo) = (pq * (1.0 + MASS_MARGIN), pq * (1.0 - MASS_MARGIN));
                let rev = if i < closed { self.rev(over) } else { 0.0 };
                u = u.min(self.mp_hi * p_up - e_eps * self.mq * q_lo + e_eps * q_up * rev);
                l = l.max(self.mp * p_lo - e_eps * q_up);
            }
            up += u.max(0.0);
            lo += l.max(0.0);
        }
        // Each pair's sum is at most its grid point s; read at that sum plus q'.
        let q1 = -self.floor;
        for &(s, m) in &bins.pairs {
            up += m * self.h(eps - s - q1 - 1e-12 * (s + q1) - 1e-18).0;
        }
        for &(s, m) in &bins.pairs_lo {
            let z = eps - s + bins.tau + 1e-12 * s + 1e-18;
            lo += m * (self.h(z).1 - bins.p_tau).max(0.0);
        }
        up += bins.beyond;
        Some((up * (1.0 + 1e-12), lo * (1.0 - 1e-12)))
    }

    /// The bracket [lower, upper] of ε at δ from the compositions read so far, with bins of
    /// loss spacing `dd` (None where the upper sum stays above δ up to `cap`, or the work is
    /// spent). Any ε whose upper sum is ≤ δ is a certified upper end and any whose lower sum is
    /// above δ a certified lower end: the bisections keep such points, to a millionth of ε
    /// (the width rule asks for a thousandth).
    pub(super) fn solve(
        &self,
        delta: f64,
        dd: f64,
        flat: f64,
        cap: f64,
        w: &Work,
    ) -> Option<(f64, f64)> {
        let spent = std::cell::Cell::new(false);
        let read = |bins: Option<&Bins>, e: f64| {
            let r = bins.and_then(|b| self.read(b, e, w));
            spent.set(spent.get() || r.is_none());
            r.unwrap_or((f64::INFINITY, 0.0))
        };
        // The upper end: doubling from a small ε (a read costs ~ε/dd bins), then a search
        // on the bins of its upper end, guided by the last ε whose upper sum (on its own bins)
        // was above δ.
        let mut b = (64.0 * dd).min(cap);
        let mut a = (0.0, f64::INFINITY);
        let (bins, top) = loop {
            let bins = self.bins(b, dd, flat, w);
            let r = read(bins.as_ref(), b);
            if r.0 <= delta {
                break (bins?, r);
            }
            if b >= cap || spent.get() {
                return None;
            }
            a = (b, r.0);
            b = (2.0 * b).min(cap);
        };
        // The lower end: within a few percent of the upper one (or 1e-4, below ε = 0.1) where
        // the lower sum there is above δ (it is, but for the widest brackets), else 0: such a
        // bracket is outside the width rule whatever its lower end (a first tilt's, mostly),
        // and the work is kept for the next tilt and the add pair's reversed composition. (At
        // q = 5.2e-9, σ = 0.74, T = 8.2·10⁸, δ = 3.2e-14, a first tilt's lower end bisected
        // from 0 left too little for the latter, and the add pair was not ruled out.)
        let near = |u: f64| (0.95 * u).min(u - crate::engine::pld::ABS_WIDTH).max(0.0);
        self.ends_on(&bins, delta, (a, (b, top)), near, 0.0, w)
    }

    /// [`Small::solve`] inside a bracket in hand (from coarser bins): the bins built once, at
    /// its upper end, and both ends bisected inside it. None where the upper sum there is
    /// above δ (the bracket in hand stands) or once the call's work is spent.
    pub(super) fn solve_within(
        &self,
        delta: f64,
        dd: f64,
        flat: f64,
        (lo, hi): (f64, f64),
        w: &Work,
    ) -> Option<(f64, f64)> {
        let bins = self.bins(hi, dd, flat, w)?;
        let top = self.read(&bins, hi, w)?;
        if top.0 > delta {
            return None;
        }
        self.ends_on(
            &bins,
            delta,
            ((lo, f64::INFINITY), (hi, top)),
            |_| lo,
            lo,
            w,
        )
    }

    /// Both ends of ε's bracket on `bins`, to a millionth of ε: the upper end searched in
    /// (a, b) (`top`: the sums read at b, the upper one at most δ), the lower end from
    /// `from(upper)` up where the lower sum there is above δ, else `none`. None once the call's
    /// work is spent.
    ///
    /// Each end by [`crossing`] (module docs): the same kind of point bisection found — an ε
    /// whose upper sum on these bins is ≤ δ (a certified upper end), one whose lower sum
    /// exceeds δ (a certified lower end) — within a millionth of ε of the crossing. The lower end's
    /// search starts from the reads the upper end's made.
    pub(super) fn ends_on(
        &self,
        bins: &Bins,
        delta: f64,
        (a, (b, top)): ((f64, f64), (f64, (f64, f64))),
        from: impl FnOnce(f64) -> f64,
        none: f64,
        w: &Work,
    ) -> Option<(f64, f64)> {
        let seen = std::cell::RefCell::new(vec![(b, top)]);
        let at = |e: f64| -> Result<(f64, f64), ()> {
            let r = self.read(bins, e, w).ok_or(())?;
            seen.borrow_mut().push((e, r));
            Ok(r)
        };
        let (_, (upper, _)) =
            crossing(a, (b, top.0), delta, (1e-6, 60), |e| at(e).map(|r| r.0)).ok()?;
        // The lower end: from the largest ε read so far in [start, upper) whose lower sum is
        // above δ (then so is the lower sum at start: it falls in ε), else from start, read;
        // to the least ε above it whose lower sum is at most δ (at `upper` it is: the lower
        // sum is at most the upper one).
        let start = from(upper);
        let lows: Vec<(f64, f64)> = (seen.borrow().iter()).map(|&(e, (_, l))| (e, l)).collect();
        let known = (lows.iter()).filter(|&&(e, l)| l > delta && e >= start && e < upper);
        let miss = match known.max_by(|x, y| x.0.total_cmp(&y.0)) {
            Some(&m) => m,
            None => (start, at(start).ok()?.1),
        };
        if miss.1 <= delta {
            return Some((none, upper));
        }
        let above = (lows.iter()).filter(|&&(e, l)| l <= delta && e > miss.0 && e <= upper);
        let meet = above.min_by(|x, y| x.0.total_cmp(&y.0)).copied();
        let meet = meet.unwrap_or((upper, 0.0));
        let ((lower, _), _) =
            crossing(miss, meet, delta, (1e-6, 60), |e| at(e).map(|r| r.1)).ok()?;
        Some((lower, upper))
    }
}
