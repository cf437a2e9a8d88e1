#!/usr/bin/env python3
"""Independent references for the batching schemes and adjacencies (issue #23).

Two families, each computed by code that shares nothing with ours: SciPy's
log_ndtr / log-survival functions for the Gaussian pieces and Google's
dp_accounting (PyPI `dp-accounting` 0.6.0) for the discretization and the FFT
composition.

* `poisson-replace-one`: Poisson sampling under replace-one adjacency. dp_accounting's
  `from_gaussian_mechanism(..., sampling_prob=q, neighboring_relation=REPLACE_ONE)`
  is the pair q N(-1, s^2) + (1-q) N(0, s^2) against q N(1, s^2) + (1-q) N(0, s^2)
  with s = sigma (noise multiplier in units of the clipping norm C, so the sum moves by
  up to 2C). Its pessimistic (connect-the-dots) estimate is an upper bound, its
  optimistic one a lower bound, both at a fine grid.

* `shuffle-lower`: the lower-bound pair of Chua et al. (ICML 2024 / NeurIPS 2024) for
  shuffled fixed-size batches: per epoch, the largest of t coordinates, one of them
  (with probability rho) shifted by a under P and by b under Q. Its CDF is
  F(m) = Phi(m/s)^(t-1) [rho Phi((m-a)/s) + (1-rho) Phi(m/s)]; we bin m on a grid of
  400,000 cells (binning is a post-processing, so the binned pair is dominated by the
  true one), hand both probability mass functions to dp_accounting's
  `from_two_probability_mass_functions` and compose. `lower` rounds losses down
  (optimistic: a lower bound on the binned, hence on the true, pair); `upper` rounds
  up (pessimistic: an upper bound on the binned pair, which at this binning is within
  a hair of the true pair's epsilon). Epochs: `full` complete ones, then one partial
  epoch of `part` steps (rho scaled by part/t).

* `truncated-poisson`: rate q over N examples, batches capped at B. Two references:
  dp_accounting's own `from_truncated_subsampled_gaussian_mechanism` (`dpa_upper`, its
  replace-one second branch: a looser upper bound), and our construction rebuilt in
  dp_accounting from SciPy's binomial tails — the mixture, branch revealed, of the
  subsampled Gaussian PLDs at (q, sigma) and (c, sigma/2) with weights 1 - p_t and
  p_t, p_t = P(Bin(N-1, q) >= B), c = B P(Bin(N, q) >= B+1) / (N p_t) (`upper`,
  `lower`: its pessimistic and optimistic estimates); `in_upper`, `in_lower`: the
  subsampled Gaussian at the inclusion rate q (1 - p_t) + p_t c, the lower bound's pair.

* `fixed-size`: B of N without replacement each step, replace-one adjacency, RDP only.
  dp_accounting's RdpAccountant under REPLACE_ONE with
  `SampledWithoutReplacementDpEvent(N, B, GaussianDpEvent(sigma / 2))` (its RDP path
  does not double the sensitivity; sigma is our noise multiplier, noise std / C): epsilon
  and its order on its default orders, and the per-step RDP at a few orders.

Writes tests/reference/sampling.jsonl.
Run: benches/.venv/bin/python tests/reference/sampling_reference.py
"""
import json
import math
import os

import numpy as np
from scipy import special
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting import privacy_accountant

HERE = os.path.dirname(os.path.abspath(__file__))
H = 1e-4
REPLACE = privacy_accountant.NeighboringRelation.REPLACE_ONE

POISSON_REPLACE = [
    # (q, sigma, steps, delta)
    (256 / 60000, 1.1, 1000, 1e-5),
    (0.01, 2.0, 300, 1e-5),
    (0.1, 3.0, 50, 1e-6),
    (1e-3, 0.8, 3000, 1e-6),
    (0.02, 1.0, 200, 1e-5),
]

# (sigma, steps per epoch t, dropped fraction r, full epochs, partial steps, adjacency, delta)
SHUFFLE = [
    (1.0, 1, 0.0, 1, 0, "add-remove", 1e-5),
    (1.1, 234, 96 / 60000, 5, 0, "add-remove", 1e-5),
    (1.0, 100, 0.0, 3, 0, "replace-one", 1e-5),
    (0.8, 50, 0.01, 2, 0, "add-remove", 1e-6),
    (2.0, 10, 0.0, 10, 0, "add-remove", 1e-5),
    (1.5, 20, 0.0, 2, 10, "add-remove", 1e-5),
]


def poisson_replace(q, sigma, steps, delta, pessimistic):
    pld = pld_lib.from_gaussian_mechanism(
        standard_deviation=sigma,
        sensitivity=1.0,
        sampling_prob=q,
        neighboring_relation=REPLACE,
        pessimistic_estimate=pessimistic,
        value_discretization_interval=H,
        use_connect_dots=pessimistic,
    )
    return pld.self_compose(steps).get_epsilon_for_delta(delta)


def log_cdf_pair(m, a, s, c, rho):
    """(ln F, ln(1-F)) of the largest of c coordinates, one shifted by a w.p. rho."""
    z, za = m / s, (m - a) / s
    lphi, lphibar = special.log_ndtr(z), special.log_ndtr(-z)
    lphia, lphibara = special.log_ndtr(za), special.log_ndtr(-za)
    with np.errstate(divide="ignore"):
        lr, l1r = math.log(rho), (math.log1p(-rho) if rho < 1 else -np.inf)
    ln_a = np.logaddexp(lr + lphia, l1r + lphi)
    ln_1ma = np.logaddexp(lr + lphibara, l1r + lphibar)
    ln_g = (c - 1) * lphi
    with np.errstate(divide="ignore"):
        ln_1mg = np.log(-np.expm1(ln_g)) if c > 1 else np.full_like(m, -np.inf)
    return ln_g + ln_a, np.logaddexp(ln_1ma, ln_a + ln_1mg)


def binned_log_pmf(a, s, c, rho, lo, hi, n):
    edges = np.linspace(lo, hi, n + 1)
    lf, ls = log_cdf_pair(edges, a, s, c, rho)
    f, sv = np.exp(lf), np.exp(ls)
    # Mass of each inner cell from whichever side is smaller; plus the two outer cells.
    use_f = f[1:] <= 0.5
    inner = np.where(use_f, f[1:] - f[:-1], sv[:-1] - sv[1:])
    masses = np.concatenate([[f[0]], inner, [sv[-1]]])
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(masses, 0.0))


def shuffle_pld(sigma, c, rho, adjacency, pessimistic, swap):
    a, b = (2.0, 1.0) if adjacency == "add-remove" else (2.0, 0.0)
    lo = -9.0 * sigma - b
    hi = a + sigma * (9.0 + math.sqrt(2.0 * math.log(c)))
    n = 400_000
    lp = binned_log_pmf(a, sigma, c, rho, lo, hi, n)
    lq = binned_log_pmf(b, sigma, c, rho, lo, hi, n)
    if swap:
        lp, lq = lq, lp
    upper = {i: v for i, v in enumerate(lp) if v > -np.inf}
    lower = {i: v for i, v in enumerate(lq) if v > -np.inf}
    return pld_lib.from_two_probability_mass_functions(
        lower, upper, pessimistic_estimate=pessimistic,
        value_discretization_interval=H, symmetric=True)


def shuffle_eps(sigma, t, r, full, part, adjacency, delta, pessimistic):
    best = 0.0
    for swap in (False, True):
        pld = None
        if full > 0:
            pld = shuffle_pld(sigma, t, 1 - r, adjacency, pessimistic, swap).self_compose(full)
        if part > 0:
            p2 = shuffle_pld(sigma, part, (1 - r) * part / t, adjacency, pessimistic, swap)
            pld = p2 if pld is None else pld.compose(p2)
        best = max(best, pld.get_epsilon_for_delta(delta))
    return best


# (N, q, B, sigma, steps, delta)
TRUNCATED = [
    (60000, 256 / 60000, 300, 1.1, 1000, 1e-5),
    (60000, 256 / 60000, 256, 1.1, 1000, 1e-5),
    (100000, 0.01, 1010, 1.0, 500, 1e-5),
    (1000, 0.1, 100, 1.5, 200, 1e-6),
    (4, 0.5, 2, 1.0, 3, 1e-6),
]


def truncated(n, q, b, sigma, steps, delta, pessimistic):
    from scipy import stats
    p_t = stats.binom.sf(b - 1, n - 1, q)
    c = b * stats.binom.sf(b, n, q) / (n * p_t)
    kw = dict(value_discretization_interval=H, pessimistic_estimate=pessimistic,
              use_connect_dots=pessimistic)
    one = pld_lib.from_gaussian_mechanism(standard_deviation=sigma, sampling_prob=q, **kw)
    two = pld_lib.from_gaussian_mechanism(standard_deviation=sigma / 2, sampling_prob=c, **kw)
    mix = two.compute_mixture(one, p_t).self_compose(steps).get_epsilon_for_delta(delta)
    q_in = q * (1 - p_t) + p_t * c
    inc = pld_lib.from_gaussian_mechanism(standard_deviation=sigma, sampling_prob=q_in, **kw)
    return mix, inc.self_compose(steps).get_epsilon_for_delta(delta)


# (N, B, sigma, steps, delta)
FIXED = [
    (60000, 256, 1.1, 14063, 1e-5),
    (60000, 256, 4.0, 14063, 1e-5),
    (10000, 100, 2.0, 1000, 1e-5),
    (1000, 100, 6.0, 500, 1e-6),
    (100000, 1000, 3.0, 5000, 1e-5),
]


def fixed_size(n, b, sigma, steps, delta):
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
    acc = rdp_lib.RdpAccountant(neighboring_relation=REPLACE)
    ev = dp_event.SampledWithoutReplacementDpEvent(n, b, dp_event.GaussianDpEvent(sigma / 2))
    acc.compose(dp_event.SelfComposedDpEvent(ev, steps))
    eps, order = acc.get_epsilon_and_optimal_order(delta)
    per_step = {str(a): float(rdp_lib._compute_rdp_sample_wor_gaussian_scalar(b / n, sigma / 2, a))
                for a in (1.5, 2, 3, 8, 32.5, 64)}
    return float(eps), float(order), per_step


def main():
    out = os.path.join(HERE, "sampling.jsonl")
    with open(out, "w") as f:
        for q, sigma, steps, delta in POISSON_REPLACE:
            row = {"kind": "poisson-replace-one", "q": q, "sigma": sigma, "steps": steps,
                   "delta": delta,
                   "upper": poisson_replace(q, sigma, steps, delta, True),
                   "lower": poisson_replace(q, sigma, steps, delta, False),
                   "interval": H,
                   "source": "dp_accounting 0.6.0 from_gaussian_mechanism REPLACE_ONE"}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
        for n, q, b, sigma, steps, delta in TRUNCATED:
            up, in_up = truncated(n, q, b, sigma, steps, delta, True)
            lo, in_lo = truncated(n, q, b, sigma, steps, delta, False)
            dpa = pld_lib.from_truncated_subsampled_gaussian_mechanism(
                dataset_size=n, sampling_probability=q, truncated_batch_size=b,
                noise_multiplier=sigma, value_discretization_interval=H,
            ).self_compose(steps).get_epsilon_for_delta(delta)
            row = {"kind": "truncated-poisson", "dataset_size": n, "q": q, "max_batch": b,
                   "sigma": sigma, "steps": steps, "delta": delta, "upper": up, "lower": lo,
                   "in_upper": in_up, "in_lower": in_lo, "dpa_upper": dpa, "interval": H,
                   "source": "scipy binomial tails + dp_accounting 0.6.0 compute_mixture; "
                             "dp_accounting from_truncated_subsampled_gaussian_mechanism"}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
        for n, b, sigma, steps, delta in FIXED:
            eps, order, per_step = fixed_size(n, b, sigma, steps, delta)
            row = {"kind": "fixed-size", "dataset_size": n, "batch_size": b, "sigma": sigma,
                   "steps": steps, "delta": delta, "epsilon": eps, "alpha": order,
                   "rdp": per_step,
                   "source": "dp_accounting 0.6.0 RdpAccountant REPLACE_ONE, "
                             "SampledWithoutReplacementDpEvent(N, B, GaussianDpEvent(sigma/2))"}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
        for sigma, t, r, full, part, adjacency, delta in SHUFFLE:
            row = {"kind": "shuffle-lower", "sigma": sigma, "steps_per_epoch": t,
                   "dropped": r, "epochs_full": full, "partial_steps": part,
                   "adjacency": adjacency, "delta": delta,
                   "upper": shuffle_eps(sigma, t, r, full, part, adjacency, delta, True),
                   "lower": shuffle_eps(sigma, t, r, full, part, adjacency, delta, False),
                   "interval": H,
                   "source": "scipy log_ndtr binning (4e5 cells) + dp_accounting 0.6.0 "
                             "from_two_probability_mass_functions"}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
