#!/usr/bin/env python3
"""Independent high-precision reference for the SGM's Rényi DP.

Computes A_alpha = E_{z~N(0,s^2)}[(1 - q + q*exp((2z-1)/(2 s^2)))^alpha]
(Mironov-Talwar-Zhang, eq. 11) by *direct numerical integration* with mpmath
(tanh-sinh quadrature over the whole real line, split at the integrand's
modes), at a working precision that keeps >= 40 significant digits of A - 1.
It does not use the paper's series, nor any formula of the Rust engine.

Writes tests/reference/rdp_cases.jsonl: one case per line with
  q, sigma, alpha            -- the exact f64 inputs (as decimal strings of the f64)
  log_a, rdp                 -- ln A_alpha and ln A_alpha/(alpha-1), 25 digits
  kappa                      -- condition number |d ln rdp / d ln q| + |d ln rdp / d ln alpha|
  quad_err                   -- mpmath's error estimate, relative to A - 1
and tests/reference/theorem5.jsonl: A_alpha >= B_alpha (Corollary 7) on a sample.

Run:  python3 tests/reference/generate.py   (needs mpmath; ~10 min on 2 cores)
"""
import json
import multiprocessing as mp_proc
import os
import sys

import mpmath as mp

HERE = os.path.dirname(os.path.abspath(__file__))

QS = [1e-8, 1e-6, 1e-4, 1e-3, 0.01, 256 / 60000, 0.05, 0.2, 0.5, 0.9, 0.999]
SIGMAS = [0.1, 0.3, 0.7, 1.0, 1.1, 2.0, 4.0, 10.0, 50.0, 200.0, 1000.0]
ALPHAS = [1.001, 1.01, 1.1, 1.5, 2.0, 2.5, 3.0, 8.1, 10.0, 32.0, 63.5, 256.0,
          1000.5, 4096.0, 10000.3, 1e5, 1e6]


def modes(q, s, alpha):
    """Critical points of ln integrand: z = alpha * p(z), p = sigmoid((z - z1)/s^2)."""
    s2 = s * s
    z1 = mp.mpf(0.5) + s2 * mp.log((1 - q) / q)
    f = lambda z: z - alpha * (1 / (1 + mp.exp(-(z - z1) / s2)))
    pts = []
    # scan [0, alpha] on a grid fine near 0 and geometric above, bracket sign changes
    grid = sorted(set([mp.mpf(0)] + [alpha * mp.mpf(i) / 400 for i in range(1, 401)]
                      + [mp.mpf(10) ** (k / 20.0) for k in range(-80, 140) if 10 ** (k / 20.0) < alpha]))
    prev = grid[0]
    fp = f(prev)
    for z in grid[1:]:
        fz = f(z)
        if fp < 0 <= fz or fp > 0 >= fz:
            pts.append(mp.findroot(f, (prev, z), solver='anderson'))
        prev, fp = z, fz
    return pts


def integrate(fun, q, s, alpha):
    pts = [mp.mpf(0.5)]
    for m in modes(q, s, alpha):
        for k in range(-10, 11, 2):
            pts.append(m + k * s)
    pts = sorted(set(pts))
    pts = [p for p in pts if p >= pts[0]]
    return mp.quad(fun, [-mp.inf] + pts + [mp.inf], error=True, maxdegree=10)


def a_alpha(q, s, alpha):
    q, s, alpha = mp.mpf(q), mp.mpf(s), mp.mpf(alpha)
    norm = 1 / (s * mp.sqrt(2 * mp.pi))
    f = lambda z: norm * mp.exp(-z * z / (2 * s * s)) * (1 - q + q * mp.exp((2 * z - 1) / (2 * s * s))) ** alpha
    return integrate(f, q, s, alpha)


def dlog_a(q, s, alpha, which):
    """d ln A / d ln q or d ln A / d ln alpha, by integrating the derivative."""
    q, s, alpha = mp.mpf(q), mp.mpf(s), mp.mpf(alpha)
    norm = 1 / (s * mp.sqrt(2 * mp.pi))

    def f(z):
        e = mp.exp((2 * z - 1) / (2 * s * s))
        w = 1 - q + q * e
        base = norm * mp.exp(-z * z / (2 * s * s))
        if which == 'q':
            return base * alpha * q * (e - 1) * w ** (alpha - 1)
        return base * alpha * mp.log(w) * w ** alpha
    return integrate(f, q, s, alpha)[0]


def case(args):
    q, s, alpha = args
    mp.mp.dps = 20
    a, _ = a_alpha(q, s, alpha)
    am1 = a - 1
    digits = max(0, int(-mp.log10(am1))) if am1 > 0 else 60
    mp.mp.dps = 45 + digits
    a, err = a_alpha(q, s, alpha)
    am1 = a - 1
    log_a = mp.log(a)
    rdp = log_a / (mp.mpf(alpha) - 1)
    mp.mp.dps = 20
    dq = dlog_a(q, s, alpha, 'q') / a
    da = dlog_a(q, s, alpha, 'a') / a
    # rdp = ln A/(alpha-1): d ln rdp/d ln alpha = da/lnA - alpha/(alpha-1)
    kappa = abs(dq / log_a) + abs(da / log_a - mp.mpf(alpha) / (mp.mpf(alpha) - 1))
    return {
        "q": repr(q), "sigma": repr(s), "alpha": repr(alpha),
        "log_a": mp.nstr(log_a, 25), "rdp": mp.nstr(rdp, 25),
        "kappa": float(kappa), "quad_err": float(err / am1) if am1 > 0 else 0.0,
    }


def theorem5(args):
    """Corollary 7: A_alpha >= B_alpha, B = E_{z~mu}[(mu0/mu)^alpha], by direct integration."""
    q, s, alpha = args
    mp.mp.dps = 40
    q, s, alpha = mp.mpf(q), mp.mpf(s), mp.mpf(alpha)
    norm = 1 / (s * mp.sqrt(2 * mp.pi))

    def fb(z):
        mu0 = norm * mp.exp(-z * z / (2 * s * s))
        mu1 = norm * mp.exp(-(z - 1) ** 2 / (2 * s * s))
        mu = (1 - q) * mu0 + q * mu1
        return mu * (mu0 / mu) ** alpha
    b, _ = integrate(fb, q, s, alpha)
    a, _ = a_alpha(q, s, alpha)
    return {"q": repr(float(q)), "sigma": repr(float(s)), "alpha": repr(float(alpha)),
            "log_a": mp.nstr(mp.log(a), 20), "log_b": mp.nstr(mp.log(b), 20)}


def main():
    cases = [(q, s, a) for q in QS for s in SIGMAS for a in ALPHAS]
    # Keep cases whose work in mpmath is bounded: a mode of width s at z ~ alpha.
    cases = [c for c in cases if c[2] / c[1] <= 1e7]
    # The largest orders (up to minutes each in mpmath) on a sub-grid that keeps the extremes.
    big_q = {1e-8, 1e-3, 0.05, 0.5, 0.999}
    big_s = {0.1, 1.1, 10.0, 1000.0}
    cases = [c for c in cases if c[2] < 1e4 or (c[0] in big_q and c[1] in big_s)]
    cases.sort(key=lambda c: c[2])  # cheap first; results are written as they come
    # The extremes early, so an interrupted run still covers them.
    cases = [c for c in cases if c[2] >= 1e5] + [c for c in cases if c[2] < 1e5]
    timeout = float(os.environ.get("CASE_TIMEOUT", "300"))
    out_path = os.path.join(HERE, "rdp_cases.jsonl")
    # Resume: keep the cases an interrupted run already wrote.
    have = []
    if os.path.exists(out_path + ".tmp"):
        with open(out_path + ".tmp") as f:
            have = [json.loads(l) for l in f if l.strip()]
    seen = {(float(r["q"]), float(r["sigma"]), float(r["alpha"])) for r in have}
    cases = [c for c in cases if c not in seen]
    done, skipped = len(have), []
    with mp_proc.Pool(os.cpu_count() or 2) as pool, open(out_path + ".tmp", "a") as f:
        jobs = [(c, pool.apply_async(case, (c,))) for c in cases]
        for c, j in jobs:
            try:
                r = j.get(timeout)
            except mp_proc.TimeoutError:
                skipped.append(c)
                continue
            f.write(json.dumps(r) + "\n")
            f.flush()
            done += 1
            if done % 100 == 0:
                print(f"{done}/{len(cases)}", file=sys.stderr, flush=True)
        t5 = [(q, s, a) for q in [1e-3, 0.05, 0.5, 0.9] for s in [0.5, 1.1, 4.0] for a in [1.5, 2.0, 8.1, 32.0]]
        with open(os.path.join(HERE, "theorem5.jsonl"), "w") as g:
            for r in pool.imap(theorem5, t5):
                g.write(json.dumps(r) + "\n")
        pool.terminate()
    os.replace(out_path + ".tmp", out_path)
    print(f"wrote {done} rdp cases ({len(skipped)} timed out: {skipped}) and {len(t5)} theorem-5 cases",
          file=sys.stderr)


if __name__ == "__main__":
    main()
