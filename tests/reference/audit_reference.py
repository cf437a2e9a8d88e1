#!/usr/bin/env python3
"""Independent references for the audit bounds (issue 65, docs/audit.md).

Every value is recomputed here from its definition with SciPy (Boost's incomplete
beta for binomial tails and Clopper-Pearson ends, its normal quantiles, brentq),
sharing no code with src/engine/audit:
* cp: the one-sided Clopper-Pearson upper end, scipy.stats.beta.ppf(1 - s, k + 1, n - k);
* sf: P(Bin(n, p) >= k), scipy.stats.binom.sf;
* pvalue: Steinke, Nasr, Jagielski's one-run p-value with its delta term, by the plain
  sum over every window (no early stop);
* one_run: the largest epsilon the p-value rejects, by brentq;
* fdp: Mahloujifar, Melis, Chaudhuri's capped recursion (arXiv 2410.22235) for mu-GDP,
  the largest rejected mu by bisection;
* audit: whole audits of stored scores (Gaussian scores at the median layout, seeded
  random scores rounded to 2 decimals so that ties occur), every test of the grid
  evaluated (no pruning), the AUC from scipy.stats.mannwhitneyu.

Writes tests/reference/audit.jsonl. Run: python/.venv/bin/python tests/reference/audit_reference.py
"""
import json
import math
import os

import numpy as np
from scipy import optimize, stats

HERE = os.path.dirname(os.path.abspath(__file__))


def cp_upper(k, n, s):
    return 1.0 if k >= n else float(stats.beta.ppf(1 - s, k + 1, n - k))


def cp_lower(k, n, s):
    return 0.0 if k == 0 else 1.0 - cp_upper(n - k, n, s)


def grid(n):
    out = []
    i = 0
    while True:
        k = math.ceil(2 ** (i / 2))
        if k > n:
            return out
        if not out or out[-1] != k:
            out.append(k)
        i += 1


def pvalue(m, k, v, eps, delta):
    q = 1 / (1 + math.exp(-eps))
    beta = float(stats.binom.sf(v - 1, k, q))
    if delta == 0 or v == 0:
        return min(beta, 1.0)
    pmf = stats.binom.pmf(np.arange(v - 1, -1, -1), k, q)  # v-1, v-2, ..., 0
    avg = np.cumsum(pmf) / np.arange(1, v + 1)
    return min(beta + 2 * m * delta * float(avg.max()), 1.0)


def one_run_eps(m, k, v, alpha, delta):
    if v == 0 or 2 * v <= k:
        return 0.0
    f = lambda e: pvalue(m, k, v, e, delta) - alpha
    if f(0.0) > 0:
        return 0.0
    hi = 1.0
    while f(hi) <= 0:
        hi *= 2
    return optimize.brentq(f, 0.0, hi, xtol=1e-12, rtol=1e-12)


def fdp_rejects(m, k, v, alpha, mu):
    r = alpha * v / m
    h = alpha * (k - v) / m
    for i in range(v - 1, -1, -1):
        g = float(stats.norm.cdf(stats.norm.ppf(r) - mu))
        h_new = max(h, g)
        if h_new == h:
            break
        r = min(r + i / (k - i) * (h_new - h), 1.0)
        h = h_new
    return r + h > k / m


def fdp_mu(m, k, v, alpha):
    if v == 0 or not fdp_rejects(m, k, v, alpha, 1e-9):
        return 0.0
    lo, hi = 1e-9, 1.0
    while fdp_rejects(m, k, v, alpha, hi):
        lo, hi = hi, hi * 2
    for _ in range(80):
        mid = (lo + hi) / 2
        if fdp_rejects(m, k, v, alpha, mid):
            lo = mid
        else:
            hi = mid
    return lo


def gauss_eps(mu, delta):
    """epsilon of the Gaussian mechanism at mu and delta (Balle & Wang, Thm 8), by brentq."""
    if mu <= 0:
        return 0.0
    d = lambda e: stats.norm.cdf(mu / 2 - e / mu) - math.exp(e) * stats.norm.cdf(-mu / 2 - e / mu) - delta
    if d(0.0) <= 0:
        return 0.0
    hi = 1.0
    while d(hi) > 0:
        hi *= 2
    return optimize.brentq(d, 0.0, hi, xtol=1e-13, rtol=1e-13)


def audit(ins, outs, alpha, delta):
    ins_d = sorted(ins, reverse=True)
    outs_d = sorted(outs, reverse=True)
    n_in, n_out = len(ins), len(outs)
    ranks = grid(n_out)
    sig = alpha / (2 * len(ranks))
    best_eps, best_mu = 0.0, 0.0
    for j in ranks:
        t = outs_d[j - 1]
        tp = sum(1 for x in ins if x > t)
        tpr_lo, fpr_hi = cp_lower(tp, n_in, sig), cp_upper(j - 1, n_out, sig)
        if tpr_lo > delta:
            best_eps = max(best_eps, math.log(tpr_lo - delta) - math.log(fpr_hi))
        if fpr_hi < 1 and tpr_lo > 0:
            best_mu = max(best_mu, float(stats.norm.isf(fpr_hi) + stats.norm.isf(1 - tpr_lo)))
    merged = sorted([(x, 1) for x in ins] + [(x, 0) for x in outs], key=lambda p: -p[0])
    m = len(merged)
    tests = grid(m)
    a = alpha / len(tests)
    one, mu1 = 0.0, 0.0
    for k in tests:
        t = merged[k - 1][0]
        guesses = sum(1 for x, _ in merged if x >= t)
        v = sum(b for x, b in merged if x >= t)
        one = max(one, one_run_eps(m, guesses, v, a, delta))
        if 2 * v > guesses:
            mu1 = max(mu1, fdp_mu(m, guesses, v, a))
    u = stats.mannwhitneyu(ins, outs).statistic
    return {
        "auc": float(u) / (n_in * n_out),
        "clopper_pearson": max(best_eps, 0.0),
        "gdp_mu": best_mu,
        "gdp_epsilon": gauss_eps(best_mu, delta),
        "one_run": one,
        "one_run_fdp_mu": mu1,
    }


def main():
    lines = []
    for k, n, s in [(0, 10, 0.025), (3, 10, 0.025), (0, 1000, 1e-6), (17, 1000, 1e-4),
                    (500, 1000, 0.05), (999, 1000, 1e-3), (12, 100000, 1e-7), (5000, 100000, 0.01)]:
        lines.append({"kind": "cp", "k": k, "n": n, "s": s, "upper": cp_upper(k, n, s)})
    for k, n, p in [(1, 10, 0.3), (8, 10, 0.3), (600, 1000, 0.5), (90, 100, 0.6), (7000, 10000, 0.6)]:
        lines.append({"kind": "sf", "k": k, "n": n, "p": p, "sf": float(stats.binom.sf(k - 1, n, p))})
    for m, k, v, eps, delta in [(1000, 100, 90, 1.0, 1e-6), (20000, 2048, 1532, 0.6, 1e-5),
                                (100, 10, 10, 0.5, 1e-3), (10000, 500, 400, 1.2, 0.0),
                                (2000, 300, 250, 1.5, 1e-4)]:
        lines.append({"kind": "pvalue", "m": m, "k": k, "v": v, "eps": eps, "delta": delta,
                      "p": pvalue(m, k, v, eps, delta)})
    for m, k, v, alpha, delta in [(1000, 100, 90, 0.05, 1e-6), (20000, 2048, 1532, 0.05 / 28, 1e-5),
                                  (100, 10, 10, 0.05, 0.0), (2000, 300, 250, 0.01, 1e-4)]:
        lines.append({"kind": "one_run", "m": m, "k": k, "v": v, "alpha": alpha, "delta": delta,
                      "epsilon": one_run_eps(m, k, v, alpha, delta)})
    for m, k, v, alpha in [(20000, 725, 582, 0.05 / 28), (1000, 100, 90, 0.05), (2000, 300, 250, 0.01)]:
        lines.append({"kind": "fdp", "m": m, "k": k, "v": v, "alpha": alpha, "mu": fdp_mu(m, k, v, alpha)})
    n = 600
    z = stats.norm.ppf((np.arange(n) + 0.5) / n)
    rng = np.random.default_rng(20261205)
    cases = [
        ("median layout mu 1", list(1.0 + z), list(z), 0.05, 1e-5),
        ("median layout mu 2.5", list(2.5 + z), list(z), 0.05, 1e-6),
        ("random mu 1.5, ties", list(np.round(rng.normal(1.5, 1, n), 2)), list(np.round(rng.normal(0, 1, n), 2)), 0.1, 1e-4),
    ]
    for name, ins, outs, alpha, delta in cases:
        ins = [float(x) for x in ins]
        outs = [float(x) for x in outs]
        lines.append({"kind": "audit", "name": name, "in_scores": ins, "out_scores": outs,
                      "significance": alpha, "delta": delta, "expected": audit(ins, outs, alpha, delta)})
    with open(os.path.join(HERE, "audit.jsonl"), "w") as f:
        for l in lines:
            f.write(json.dumps(l) + "\n")


if __name__ == "__main__":
    main()
