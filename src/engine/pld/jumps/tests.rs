use super::*;
use crate::engine::math::exp;
use crate::engine::Sgm;

/// A run's small pair at its first spacing, with its forward composition tilted a spread
/// above its mean (as [`on_lattice`] composes it first).
fn composed_small_pair(q: f64, sigma: f64, t: u64, delta: f64) -> (Small, Lattices) {
    let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
    let p = Phase::new(Sgm::new(q, sigma).unwrap(), t).unwrap();
    let cap = super::super::rdp_epsilon(std::slice::from_ref(&p), delta).0;
    let (run, d0, _) = start(&p, cap, w).unwrap();
    let Setup {
        mut small,
        lat,
        m0,
        s0,
        ..
    } = setup(run, delta, (cap, false), d0, w).unwrap();
    let forward = lat.compose_lowering_after(lat.tilt_for(m0 + s0, 1.0, w), w);
    small.comps.push(forward.unwrap());
    (small, lat)
}

/// The small pair's reversed composition bounds δ_rev from above, and its forward one, read
/// from below, bounds it from below (H(y) = M_P − e^y·M_Q + e^y·δ_rev(−y), M_P ≤ `mp_hi`,
/// M_Q ≥ `mq`): the two must agree. At q = 4.692e-8, σ = 0.405, T = 562,805,544 the first
/// spacing (6.2e-8, above q) puts the lattice on offsets, the composed losses shifted by
/// −22.4; the reversed composition used to leave out its tail's points at unshifted losses
/// ≥ 0 — the whole tail — and read δ_rev(0.02) = 6.1e-4 where the forward one proves at
/// least 2.4e-3 (the remove pair's upper end read after it fell below its lower end).
#[test]
fn the_reversed_small_pair_bounds_what_the_forward_one_proves() {
    let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
    let (mut small, lat) = composed_small_pair(4.692e-8, 0.405, 562_805_544, 1.36e-5);
    assert!(
        lat.shift() < -1.0,
        "the lattice has offsets: {}",
        lat.shift()
    );
    small.revs.push(
        lat.ladder_reversed(lat.tilt_reversed(0.1048, 1.0, w), w)
            .unwrap(),
    );
    for y in [-0.001f64, -0.005, -0.01, -0.02] {
        let h_lo = small.comps[0].delta(y).1;
        let below = (h_lo - small.mp_hi + exp(y) * small.mq) / exp(y);
        let above = small.rev(-y);
        assert!(
            below > 0.0 && above >= below,
            "delta_rev({}) read {above:e}, proven at least {below:e}",
            -y
        );
    }
}

/// The small pair's optimistic (lower) composition stays below what the exact masses allow:
/// H(y) ≤ M_P − e^y·M_Q + e^y·δ_rev(−y) for y < 0, with M_P ≤ `mp_hi`, M_Q ≥ `mq` and δ_rev
/// read from above. At q = 1.537e-9, σ = 0.7839, T = 324,535,627 the losses are ~1e-9 and the
/// one lattice is used T times: its bins' atoms, placed at ln ΔP − ln ΔQ (1 − q rounded to
/// f64 in ΔP), sat ~1e-16 too high each, and the lower end read H(−0.001) 1.6e-8 above that
/// bound (H(−0.0002) 3.0e-8 above).
#[test]
fn the_small_pair_lower_composition_stays_below_the_exact_masses() {
    let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
    let (mut small, lat) = composed_small_pair(1.537e-9, 0.7839, 324_535_627, 1.02e-3);
    for y in [-0.001f64, -0.0002, -0.00005] {
        small.revs.push(
            lat.ladder_reversed(lat.tilt_reversed(-y, 1.0, w), w)
                .unwrap(),
        );
        let h_lo = small.comps[0].delta(y).1;
        let bound = small.mp_hi - exp(y) * small.mq + exp(y) * small.rev(-y);
        assert!(
            h_lo > 0.0 && h_lo <= bound,
            "H({y}) read {h_lo:e} from below, at most {bound:e}"
        );
    }
}
