#!/usr/bin/env python3
"""Independent high-precision reference for the tight (PLD) accountant.

For the Poisson-subsampled Gaussian (sensitivity 1, noise sigma, rate q) under
add/remove-one adjacency, the hockey-stick divergence of T steps is
    delta_T(eps) = E_P[(1 - exp(eps - L_T))_+],   L_T = L(x_1) + ... + L(x_T),
with, for the remove pair, P = (1-q)N(0,s^2) + qN(1,s^2), Q = N(0,s^2),
L(x) = ln(1 - q + q exp((2x-1)/(2 s^2))), and for the add pair the roles swapped
(x ~ N(0,s^2), loss -L(x)). The answer is the larger of the two directions.

Computed here with mpmath at 40 digits, without any of the Rust engine's methods
(no lattice, no FFT, no tilt):
  * T = 1: direct numerical integration over x of p(x) (1 - exp(eps - L(x)))_+,
    split at the point where L(x) = eps;
  * T = 2: delta_2(eps) = integral over x of p(x) delta_1(eps - L(x)) dx, where
    delta_1(t) = P(L > t) - e^t Q(L > t) is the one-step profile in closed form
    (Gaussian tails), and the outer integral is again done numerically.

Writes tests/reference/pld_cases.jsonl: q, sigma, steps, epsilon, delta_remove,
delta_add, delta (the max), each as a decimal string.

Run: python3 tests/reference/pld_reference.py   (needs mpmath; a few minutes)
"""
import json
import os

import mpmath as mp

mp.mp.dps = 40
HERE = os.path.dirname(os.path.abspath(__file__))


def phi_bar(z):
    return mp.erfc(z / mp.sqrt(2)) / 2


def phi(z):
    return mp.erfc(-z / mp.sqrt(2)) / 2


def x_of_loss(q, s, l):
    """x with L(x) = l (remove direction); -inf when l <= ln(1-q)."""
    if q == 1:
        return mp.mpf(0.5) + s * s * l
    num = mp.exp(l) - (1 - q)
    if num <= 0:
        return -mp.inf
    return mp.mpf(0.5) + s * s * mp.log(num / q)


def loss(q, s, x):
    return mp.log(1 - q + q * mp.exp((2 * x - 1) / (2 * s * s)))


def delta1_closed(q, s, t, direction):
    """One-step profile P(L > t) - e^t Q(L > t), closed form."""
    if direction == "remove":
        x = x_of_loss(q, s, t)
        if x == -mp.inf:
            return 1 - mp.exp(t)
        p_tail = (1 - q) * phi_bar(x / s) + q * phi_bar((x - 1) / s)
        q_tail = phi_bar(x / s)
        return p_tail - mp.exp(t) * q_tail
    # add: loss -L(x) > t  <=>  L(x) < -t  <=>  x < x*(-t)
    x = x_of_loss(q, s, -t)
    if x == -mp.inf:
        return mp.mpf(0)
    p_tail = phi(x / s)
    q_tail = (1 - q) * phi(x / s) + q * phi((x - 1) / s)
    return p_tail - mp.exp(t) * q_tail


def density_p(q, s, x, direction):
    g0 = mp.npdf(x, 0, s)
    if direction == "add":
        return g0
    return (1 - q) * g0 + q * mp.npdf(x, 1, s)


def step_loss(q, s, x, direction):
    l = loss(q, s, x)
    return l if direction == "remove" else -l


def delta1_integral(q, s, eps, direction):
    """T = 1 by direct integration of p(x)(1 - e^{eps - L(x)})_+ over x."""
    f = lambda x: density_p(q, s, x, direction) * max(mp.mpf(0), 1 - mp.exp(eps - step_loss(q, s, x, direction)))
    if direction == "remove":
        xs = x_of_loss(q, s, eps)
        if xs == -mp.inf:
            return mp.quad(f, [-mp.inf, 0, 1, mp.inf])
        return mp.quad(f, [xs, xs + s, xs + 10 * s, mp.inf])
    xs = x_of_loss(q, s, -eps)
    if xs == -mp.inf:
        return mp.mpf(0)
    return mp.quad(f, [-mp.inf, xs - 10 * s, xs - s, xs])


def delta2(q, s, eps, direction):
    """T = 2: integral of p(x) delta_1(eps - L(x)) dx (numerical outer integral).

    The integral is split every s/4 over [-12s, 1 + 12s] and at the x where eps - L(x)
    reaches the loss's infimum ln(1 - q) (where delta_1 changes form), and computed twice,
    by tanh-sinh and by Gauss-Legendre quadrature, which must agree to 1e-12. (With ten
    wide pieces, as first written, tanh-sinh was off by ~1e-5 relative — q = 256/60000,
    sigma = 0.7, eps = 0.5: 6.4702253e-6 where both rules on the fine split give
    6.4701710e-6 — and the tight accountant's converged brackets, not the reference,
    were right.)
    """
    f = lambda x: density_p(q, s, x, direction) * delta1_closed(q, s, eps - step_loss(q, s, x, direction), direction)
    n = int(mp.ceil((1 + 24 * s) / (s / 4)))
    pts = [-12 * s + k * (1 + 24 * s) / n for k in range(n + 1)]
    if q < 1:
        # delta_1(t) changes form at t = ln(1 - q) (remove: L(x) = eps - ln(1 - q)) and at
        # t = -ln(1 - q) (add, loss -L: eps + L(x) = -ln(1 - q), L(x) = -eps - ln(1 - q)).
        sign = 1 if direction == "remove" else -1
        xk = x_of_loss(q, s, sign * eps - mp.log(1 - q))
        if xk != -mp.inf and pts[0] < xk < pts[-1]:
            pts = sorted(pts + [xk])
    pts = [-mp.inf] + pts + [mp.inf]
    a = mp.quad(f, pts)
    b = mp.quad(f, pts, method="gauss-legendre")
    assert abs(a - b) <= mp.mpf("1e-12") * abs(a) + mp.mpf("1e-40"), (q, s, eps, direction, a, b)
    return a


CASES = []
for q in [mp.mpf(256) / 60000, mp.mpf("0.01"), mp.mpf("0.2"), mp.mpf("0.5"), mp.mpf(1)]:
    for s in [mp.mpf("0.7"), mp.mpf("1.1"), mp.mpf(3)]:
        for eps in [mp.mpf("0.05"), mp.mpf("0.5"), mp.mpf(2), mp.mpf(5)]:
            for steps in [1, 2]:
                CASES.append((q, s, eps, steps))


def main():
    out = os.path.join(HERE, "pld_cases.jsonl")
    with open(out, "w") as fh:
        for q, s, eps, steps in CASES:
            vals = {}
            for d in ["remove", "add"]:
                if steps == 1:
                    vals[d] = delta1_integral(q, s, eps, d)
                    # Two independent routes must agree (integration vs closed form)
                    # wherever the value is recorded (δ ≥ 1e-18).
                    closed = delta1_closed(q, s, eps, d)
                    if closed > mp.mpf("1e-18"):
                        assert abs(vals[d] - closed) <= mp.mpf("1e-20") * closed, (q, s, eps, d)
                else:
                    vals[d] = delta2(q, s, eps, d)
            best = max(vals["remove"], vals["add"])
            if best < mp.mpf("1e-15"):
                continue
            fh.write(json.dumps({
                "q": mp.nstr(q, 20), "sigma": mp.nstr(s, 20), "steps": steps,
                "epsilon": mp.nstr(eps, 20),
                "delta_remove": mp.nstr(vals["remove"], 25),
                "delta_add": mp.nstr(vals["add"], 25),
                "delta": mp.nstr(best, 25),
            }) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
