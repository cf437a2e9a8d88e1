//! Emulations of other libraries' accountants at their defaults (dp_accounting's PLD,
//! Opacus' PRV), computed by our own code for the "what your library prints" rows.

use super::*;
use crate::engine::math::exp;
use crate::engine::pld::compose::Work;

/// dp_accounting's default `value_discretization_interval` for its `PLDAccountant`.
pub const DP_ACCOUNTING_GRID: f64 = 1e-4;
/// The widest window [`dp_accounting_epsilon`] composes (2²¹ points, 32 MB per buffer):
/// that library's numpy FFTs are as wide as the composed loss needs.
pub(super) const DP_ACCOUNTING_FFT: usize = 1 << 21;

/// The ε Google's dp_accounting `PLDAccountant` reports for T steps of one SGM at its
/// default value discretization interval ([`DP_ACCOUNTING_GRID`]), add/remove adjacency:
/// the T-fold composition of the connect-the-dots PLD on the fixed lattice {kΔ}
/// (pessimistic; tails beyond P-mass e^{−50} per step to +∞, its
/// `log_mass_truncation_bound`), both directions, read at δ — the same construction
/// (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots", PETS 2022) with no
/// refinement, so it keeps that grid's bias: on long runs with small q, whose per-step
/// losses are of the order of Δ, it lies well above the tight ε. One FFT (the ladder would
/// re-discretize, which that library does not); a window beyond it is refused.
pub fn dp_accounting_epsilon(sgm: Sgm, steps: u64, delta: f64) -> Result<f64, Error> {
    let w = &Work::new(super::WORK);
    let phases = [Phase::new(sgm, steps)?];
    check_phases(&phases)?;
    w.budget(WORK);
    let delta = check_delta(delta)?;
    if sgm.q() == 0.0 {
        return Ok(0.0);
    }
    let (eps_rdp, alpha) = rdp_epsilon(&phases, delta);
    let eta = exp(-50f64);
    let mut upper = 0.0f64;
    for &dir in directions(&phases) {
        let mut lat = Lattices::build(&phases, dir, DP_ACCOUNTING_GRID, (eta, eta), None, w)?;
        lat.one_fft = Some(DP_ACCOUNTING_FFT);
        let (u, _, _) = eps_direction(&lat, delta, eps_rdp, alpha, TOL, w)?;
        upper = upper.max(u);
    }
    Ok(upper)
}

/// Opacus' `PRVAccountant.get_epsilon(delta)` with its defaults (`eps_error` = 0.01,
/// `delta_error` = δ/1000), which prints the PRV accountant's upper bound: its estimate
/// at δ − δ/1000 plus `eps_error` (Gopi, Lee, Wutschitz, "Numerical Composition of
/// Differential Privacy", NeurIPS 2021; prv_accountant's `compute_epsilon`). The estimate
/// is the tight ε to its discretization; ours is the certified upper end at δ(1 − 10⁻³),
/// within ~1e-4 of it on the runs checked.
pub fn opacus_prv_epsilon(sgm: Sgm, steps: u64, delta: f64) -> Result<f64, Error> {
    let delta = check_delta(delta)?;
    Ok(epsilon(sgm, steps, delta * (1.0 - 1e-3))?.epsilon.upper + 0.01)
}
