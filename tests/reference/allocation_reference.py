#!/usr/bin/env python3
"""Independent reference for random allocation ("balls in bins", issue #24).

One epoch of one-in-t random allocation with the Gaussian mechanism (noise multiplier
sigma, add/remove-one) is the pair whose likelihood ratio under Q is
W = (1/t) * sum_i V_i, V_i = exp(Y_i) independent, Y_i ~ N(-s^2/2, s^2), s = 1/sigma
(remove: loss ln W under the W-tilted law; add: loss -ln W under the law of W).

This script shares no code or discretization with the engine (which spreads and
contracts V on its lattice and composes under exponential tilts with certified error
terms): SciPy's normal log-CDF gives V's mass on cells of width H_V centred on the grid
(midpoint rounding: neither pessimistic nor optimistic, converged as H_V -> 0), NumPy's
real FFT (untilted, on a support long enough not to wrap) gives the t-fold sum, and
Google's dp_accounting (PyPI dp-accounting 0.6.0) discretizes both directions' loss
(`from_two_probability_mass_functions`, pessimistic and optimistic) and composes the
epochs. `upper`/`lower` are its pessimistic/optimistic epsilons of that converged pair:
estimates, not certificates; the engine's bracket must meet them within their gap plus
a small tolerance (tests/allocation.rs).

At small sigma (the two z = 7.5 rows) the sum's FFT reaches W ~ 10^4, where NumPy's
rounding noise (~1e-17 per point, kept when positive) carries P-mass W*p: the estimates
there lean high by ~1e-4 (sigma = 0.7, t = 10: 12.4856/12.4866 at z = 7.5, 12.4851/12.4861
at z = 7.0, and 12.4847/12.4857 with values below 1e-13 of the peak zeroed, which drops
some true tail mass instead); the engine's bracket [12.4827, 12.4855] is also inside the
unsplit engine's (a 2^25-point FFT, no split: [12.4823, 12.4912]).

Writes tests/reference/allocation.jsonl.
Run: benches/.venv/bin/python tests/reference/allocation_reference.py [--missing]
"""
import json
import math
import os

import numpy as np
from scipy import special
from dp_accounting.pld import privacy_loss_distribution as pld_lib

HERE = os.path.dirname(os.path.abspath(__file__))
H = 1e-4  # dp_accounting's loss discretization

# (sigma, t, epochs, delta, H_V[, z]): V is cut at exp(s^2/2 + z*s), z = 9 unless given
# (small sigma: z = 7.5 keeps the FFT near 2^23 points; the mass cut, t*Phi(-7.5) per
# epoch in the remove direction, is ~1e-12, far below delta).
CASES = [
    (2.0, 10, 10, 1e-6, 2e-3),
    (1.1, 234, 60, 1e-5, 1e-2),
    (1.0, 50, 20, 1e-5, 5e-3),
    (3.0, 20, 5, 1e-6, 2e-3),
    (0.7, 10, 10, 1e-5, 2e-2, 7.5),
    (0.8, 100, 10, 1e-5, 1e-2, 7.5),
]


def v_pmf(s, hv, cap):
    """V's mass on cells ((j - 1/2) hv, (j + 1/2) hv], j = 0 .. cap/hv."""
    n = int(math.ceil(cap / hv)) + 1
    edges = (np.arange(n + 1) - 0.5) * hv
    edges[0] = 0.0
    with np.errstate(divide="ignore"):
        z = (np.log(edges) + 0.5 * s * s) / s
    cdf = special.ndtr(z)
    return np.diff(cdf)


def law(sigma, t, hv, z=9.0):
    s = 1.0 / sigma
    cap = math.exp(0.5 * s * s + z * s)
    m = v_pmf(s, hv, cap)
    # S = sum of t copies: the support that matters is [0, t + 2 cap] (two large V's
    # together have probability below 1e-30 here); the FFT is that long.
    n = 1 << int(math.ceil(math.log2((t * 1.0 + 2 * cap + 40 * math.sqrt(t)) / hv + len(m))))
    spec = np.fft.rfft(m, n) ** t
    p = np.fft.irfft(spec, n)
    p[p < 1e-300] = 0.0
    w = np.arange(n) * hv / t
    return w, p


def eps(sigma, t, epochs, delta, hv, pessimistic, z=9.0):
    w, p = law(sigma, t, hv, z)
    keep = (p > 0) & (w > 0)
    w, p = w[keep], p[keep]
    best = 0.0
    for direction in ("remove", "add"):
        if direction == "remove":
            lp, lq = np.log(w * p), np.log(p)
        else:
            lp, lq = np.log(p), np.log(w * p)
        upper = {i: v for i, v in enumerate(lp)}
        lower = {i: v for i, v in enumerate(lq)}
        pld = pld_lib.from_two_probability_mass_functions(
            lower, upper, pessimistic_estimate=pessimistic,
            value_discretization_interval=H, symmetric=True)
        best = max(best, pld.self_compose(epochs).get_epsilon_for_delta(delta))
    return best


def main():
    """All rows; with --missing, only the cases not yet in the file (appended)."""
    import sys
    path = os.path.join(HERE, "allocation.jsonl")
    missing = "--missing" in sys.argv
    have = set()
    if missing and os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            have.add((r["sigma"], r["steps_per_epoch"], r["epochs"], r["delta"]))
    with open(path, "a" if missing else "w") as f:
        for sigma, t, epochs, delta, hv, *z in CASES:
            if (sigma, t, epochs, delta) in have:
                continue
            z = z[0] if z else 9.0
            row = {"sigma": sigma, "steps_per_epoch": t, "epochs": epochs, "delta": delta,
                   "upper": eps(sigma, t, epochs, delta, hv, True, z),
                   "lower": eps(sigma, t, epochs, delta, hv, False, z),
                   "cell": hv,
                   "source": "scipy ndtr cells + numpy FFT sum + dp_accounting 0.6.0 "
                             "from_two_probability_mass_functions"}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
