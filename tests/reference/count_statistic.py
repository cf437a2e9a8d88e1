#!/usr/bin/env python3
"""Certified lower ends of epsilon from one test statistic: the count of large samples.

DP-SGD's remove pair, one step: P = (1-q) N(0, s^2) + q N(1, s^2) against Q = N(0, s^2).
Post-processing cannot raise delta(eps), so for any statistic S of the T outputs,
delta(eps) >= sup_t [P(S >= t) - e^eps Q(S >= t)]. Take S = #{i : x_i > c}: under Q it is
Binomial(T, p0) with p0 = Phi-bar(c/s), under P Binomial(T, p1) with
p1 = (1-q) Phi-bar(c/s) + q Phi-bar((c-1)/s). Both laws in closed form (mpmath, 40 digits), so
delta_S(eps) = sum_k [P(S=k) - e^eps Q(S=k)]_+ is exact, and any eps with delta_S(eps) > delta
is a certified lower end of the true epsilon. The threshold c is scanned; the best eps is kept.

Where epsilon is decided by a few steps with a large loss (tiny q at small sigma: the cases
engine::pld::jumps answers) this statistic is nearly optimal, so it is a sharp independent
floor: it shares nothing with the engine (no lattice, FFT, tilt or decomposition). The engine's
certified upper ends must sit above it (tests/pld_coverage.rs).

Writes tests/reference/count_statistic.jsonl. Run: make reference (about four minutes).
"""
import json
import os

import mpmath as mp

HERE = os.path.dirname(os.path.abspath(__file__))

# (q, sigma, steps, delta): the two draws of the 300-draw domain sweep the lattices refused
# (2026-11-26), and a one-jump run of tests/reference/one_jump.py.
RUNS = [
    (4.874e-9, 0.3982, 77_400_002, 1.2e-6),
    (2.136e-9, 0.5108, 581_266_865, 3.33e-15),
    (3.764e-7, 0.607, 10_000, 7.2e-14),
    # A corner draw refused until the term with two large steps was read from the small pair's
    # composition (2026-11-28).
    (4.443e-9, 0.3754, 200_386_724, 5.3e-15),
]


def delta_s(q, s, t, c, eps):
    p0 = mp.ncdf(-c / s)
    p1 = (1 - q) * p0 + q * mp.ncdf(-(c - 1) / s)
    mean = t * p1
    top = int(mean + 60 * mp.sqrt(mean + 1) + 60)
    total = mp.mpf(0)
    lp, lq = mp.log(p1), mp.log(p0)
    l1p, l1q = mp.log1p(-p1), mp.log1p(-p0)
    for k in range(0, top + 1):
        lb = mp.loggamma(t + 1) - mp.loggamma(k + 1) - mp.loggamma(t - k + 1)
        a = mp.exp(lb + k * lp + (t - k) * l1p)
        b = mp.exp(lb + k * lq + (t - k) * l1q + eps)
        if a > b:
            total += a - b
    return total


def lower_end(q, s, t, delta):
    mp.mp.dps = 40
    q, s, delta = mp.mpf(q), mp.mpf(s), mp.mpf(delta)
    best = (mp.mpf(0), None)
    for i in range(40, 121):
        c = s * mp.mpf(i) / 10
        if delta_s(q, s, t, c, 0) <= delta:
            continue
        lo, hi = mp.mpf(0), mp.mpf(10)
        for _ in range(50):
            mid = (lo + hi) / 2
            if delta_s(q, s, t, c, mid) > delta:
                lo = mid
            else:
                hi = mid
        if lo > best[0]:
            best = (lo, c / s)
    return best


def main():
    out = []
    for q, s, t, delta in RUNS:
        eps, cz = lower_end(q, s, t, delta)
        out.append(
            {
                "q": q,
                "sigma": s,
                "steps": t,
                "delta": delta,
                "epsilon_lower": float(eps),
                "threshold_in_sigmas": float(cz),
                "method": "binomial count of samples above c, exact sums, mpmath 40 digits",
                "mpmath": mp.__version__,
            }
        )
        print(out[-1])
    with open(os.path.join(HERE, "count_statistic.jsonl"), "w") as f:
        for r in out:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
