#!/usr/bin/env python3
"""Reference epsilons where one rare large loss decides delta (tiny q, sigma near 0.6, tiny delta).

The Sampled Gaussian Mechanism's remove pair: P = (1-q) N(0, s^2) + q N(1, s^2) against
Q = N(0, s^2), per-step loss L(x) = ln(1 - q + q e^{(2x-1)/(2 s^2)}). For q ~ 4e-7, s ~ 0.6
and delta ~ 1e-13 the loss that reaches epsilon is a single step's (an x ~ 5 sigma draw): its
log-normal-like tail falls far slower than any exponential tilt can center, and two such steps
together are ~(T P(L > eps/2))^2, negligible. So, independently of any lattice, FFT or tilt:

    delta(eps) ~= T * E_P[ E_G[ (1 - e^{eps - L - G})_+ ] ]

with G ~ N(T m, T v) the sum of the other steps (m, v: the per-step mean and variance of L
under P, by mpmath quadrature), and the inner expectation in closed form. Solved for eps by
mpmath's findroot at 30 digits. It shares nothing with the engine (no lattice, FFT, tilt
or bound), but it is an estimate, not a bound: it neglects two large steps together and the
remainder's departure from a Gaussian (its standard deviation is 1e-4 to 6e-3 here, far
below eps), and bounds neither. The engine's certified brackets must contain it to within
2e-5 of eps (tests/pld_coverage.rs).

Writes tests/reference/one_jump.jsonl. Run: make reference (mpmath, a few seconds a run).
"""
import json
import os

import mpmath as mp

HERE = os.path.dirname(os.path.abspath(__file__))

# (q, sigma, steps, delta, starting guess): the domain sweep's draws that were refused until
# the ladder's floor followed delta's tilted share (2026-11-26), and a shorter run.
RUNS = [
    (3.764e-7, 0.607, 10_000, 7.2e-14, 0.05),
    (3.764e-7, 0.607, 2_154_628, 7.2e-14, 0.17),
    (3.952e-7, 0.590, 13_947_714, 6.6e-14, 0.38),
    # Refused by the lattices until rare large losses were composed in closed form
    # (engine::pld::jumps, 2026-11-26): exact RDP's 3.25 was all that was left.
    (2.136e-9, 0.5108, 581_266_865, 3.33e-15, 0.05),
    # Refused until the term with two large steps was read from the small pair's composition
    # rather than charged in full (engine::pld::jumps, 2026-11-28): the corner sweep's draws at
    # delta <= 5e-14, where that charge put the small pair's losses up to 0.8.
    (4.443e-9, 0.3754, 200_386_724, 5.3e-15, 4.4),
    (1.332e-9, 0.3337, 26_153_292, 4.2e-14, 4.55),
    # Less than one sampled step over the run (T q ~ 0.005-0.009): refused until the small
    # pair's reversed hockey stick was known to be 0 past T(-ln(1 - q)), and the big steps
    # past eps were summed in closed form; the second also needed the cube-root rule's
    # smaller small pair (engine::pld::jumps, 2026-11-28).
    (1.439e-9, 0.3304, 6_498_578, 8.97e-10, 0.5),
    (1.398e-9, 0.3543, 3_577_834, 1.1e-12, 0.8),
]


def one_jump_epsilon(q, s, t, delta, guess):
    mp.mp.dps = 30
    q, s, t, delta = mp.mpf(q), mp.mpf(s), mp.mpf(t), mp.mpf(delta)

    def loss(x):
        return mp.log(1 - q + q * mp.exp((2 * x - 1) / (2 * s * s)))

    def pdf(x):
        return (1 - q) * mp.npdf(x, 0, s) + q * mp.npdf(x, 1, s)

    cuts = [-mp.inf, -5, 0, 1, 5, mp.inf]
    m1 = mp.quad(lambda x: pdf(x) * loss(x), cuts)
    m2 = mp.quad(lambda x: pdf(x) * loss(x) ** 2, cuts)
    mean, var = t * m1, t * (m2 - m1 * m1)
    sd = mp.sqrt(var)

    def inner(eps, l):
        # E[(1 - e^{-(a + Z)})_+], Z ~ N(0, var), a = l + mean - eps.
        a = l + mean - eps
        return mp.ncdf(a / sd) - mp.exp(-a + var / 2) * mp.ncdf((a - var) / sd)

    def delta_of(eps):
        # Below x0 a step's loss is 12 remainder deviations under eps: its term is < 1e-30.
        lo = eps - 12 * sd
        x0 = (mp.log((mp.exp(lo) - 1 + q) / q) * 2 * s * s + 1) / 2
        return t * mp.quad(lambda x: pdf(x) * inner(eps, loss(x)), [x0, x0 + 1, x0 + 3, mp.inf])

    eps = mp.findroot(lambda e: mp.log(delta_of(e)) - mp.log(delta), mp.mpf(guess))
    return float(eps), float(mean), float(sd)


def main():
    out = []
    for q, s, t, delta, guess in RUNS:
        eps, mean, sd = one_jump_epsilon(q, s, t, delta, guess)
        out.append(
            {
                "q": q,
                "sigma": s,
                "steps": t,
                "delta": delta,
                "epsilon": eps,
                "remainder_mean": mean,
                "remainder_sd": sd,
                "method": "one rare jump + Gaussian remainder, mpmath 30 digits",
                "mpmath": mp.__version__,
            }
        )
        print(out[-1])
    with open(os.path.join(HERE, "one_jump.jsonl"), "w") as f:
        for r in out:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
