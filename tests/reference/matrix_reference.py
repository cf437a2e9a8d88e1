#!/usr/bin/env python3
"""Monte Carlo reference for correlated noise under b-min-separated participation (issue 67).

Independent of the engine's reduction: it simulates the whole release y = C·x + σ·z in R^T
(one-dimensional gradients at the clipping norm, aligned: the worst case), for an example of
partition r whose participations x_j ~ Bernoulli(q) at the steps j ≡ r (mod k), and evaluates
the exact privacy loss L(y) = ln Q(y)/P(y) by summing over all 2^n participation patterns with
the full matrix C (no use of the columns' disjoint supports, which is what the engine's
reduction relies on):

    Q(y)/P(y) = Σ_x Pr(x) · exp(⟨y, Cx⟩/σ² − ‖Cx‖²/(2σ²)),   P: the example absent.

δ(ε) of each direction is then estimated by sampling (seeded): δ_{Q‖P}(ε) = E_Q[(1 − e^{ε−L})+],
δ_{P‖Q}(ε) = E_P[(1 − e^{ε+L})+]; the mechanism's δ(ε) is the largest over partitions and
directions. Each estimate carries its standard error (the mean of i.i.d. terms in [0, 1]).
C is normalised to largest column norm 1, as the engine does.

Run: benches/.venv/bin/python tests/reference/matrix_reference.py  (numpy; writes matrix.jsonl)
"""
import itertools
import json
import math
from pathlib import Path

import numpy as np

N = 400_000  # samples per partition and direction


def toeplitz(c, t):
    m = np.zeros((t, t))
    for i in range(t):
        for j in range(max(0, i - len(c) + 1), i + 1):
            m[i, j] = c[i - j]
    return m


def blt(decay, scale, t):
    """BLT: c(0) = 1, c(m) = sum_l scale_l * decay_l^(m-1) (Dvijotham et al., arXiv 2404.16706)."""
    c = [1.0] + [sum(w * d ** (m - 1) for d, w in zip(decay, scale)) for m in range(1, t)]
    return toeplitz(c, t)


def tree(t):
    """Binary-tree aggregation's node matrix: one row per complete dyadic block of [0, t)."""
    rows = []
    w = 1
    while w <= t:
        for a in range(t // w):
            r = np.zeros(t)
            r[a * w:(a + 1) * w] = 1.0
            rows.append(r)
        w *= 2
    return np.array(rows)


def patterns(t, q, joins):
    """The example's participation patterns x in {0,1}^t with their probabilities, for each
    case the adversary may face (a partition under min-sep; one law otherwise)."""
    kind, k = joins
    if kind == "min-sep":
        for r in range(min(k, t)):
            steps = list(range(r, t, k))
            bits = np.array(list(itertools.product([0, 1], repeat=len(steps))), dtype=float)
            x = np.zeros((len(bits), t))
            x[:, steps] = bits
            yield x, np.prod(np.where(bits == 1, q, 1 - q), axis=1)
    elif kind == "poisson":
        x = np.array(list(itertools.product([0, 1], repeat=t)), dtype=float)
        yield x, np.prod(np.where(x == 1, q, 1 - q), axis=1)
    elif kind == "cyclic-bins":  # one bin of k drawn once, every step of that bin
        x = np.array([[1.0 if j % k == b else 0.0 for j in range(t)] for b in range(k)])
        yield x, np.full(k, 1.0 / k)
    else:  # balls-in-bins, k steps per epoch, a fresh bin each epoch
        epochs = [list(range(e, min(e + k, t))) for e in range(0, t, k)]
        rows = []
        for pick in itertools.product(*epochs):
            x = np.zeros(t)
            x[list(pick)] = 1
            rows.append(x)
        x = np.array(rows)
        yield x, np.full(len(x), 1.0 / len(x))


def deltas(C, q, sigma, joins, eps_list, rng):
    t, rows = C.shape[1], C.shape[0]  # steps (columns), released rows (the tree has more)
    C = C / np.max(np.linalg.norm(C, axis=0))
    worst = np.zeros(len(eps_list))
    worst_se = np.zeros(len(eps_list))
    for pats, prob in patterns(t, q, joins):
        shifts = pats @ C.T  # (patterns, t): C·x for each pattern
        half = 0.5 * np.sum(shifts**2, axis=1) / sigma**2
        with np.errstate(divide="ignore"):  # q = 1: patterns of probability 0
            logp = np.log(prob)

        def loss(y):
            # ln Σ_x Pr(x) exp(<y, Cx>/σ² − ‖Cx‖²/2σ²), stably, in chunks.
            out = []
            for i in range(0, len(y), 20000):
                a = y[i:i + 20000] @ shifts.T / sigma**2 - half + logp
                m = a.max(axis=1, keepdims=True)
                out.append((m + np.log(np.exp(a - m).sum(axis=1, keepdims=True)))[:, 0])
            return np.concatenate(out)

        z = rng.standard_normal((N, rows)) * sigma
        # Q: the example present, its pattern drawn.
        idx = rng.choice(len(prob), size=N, p=prob)
        lq = loss(z + shifts[idx])
        lp = loss(rng.standard_normal((N, rows)) * sigma)
        for i, e in enumerate(eps_list):
            for terms in (np.maximum(0.0, 1 - np.exp(e - lq)), np.maximum(0.0, 1 - np.exp(e + lp))):
                d = terms.mean()
                if d > worst[i]:
                    worst[i] = d
                    worst_se[i] = terms.std() / math.sqrt(N)
    return worst, worst_se


CASES = [
    # (name, strategy spec for the engine, C builder, q, sigma, T, k)
    ("identity", "band:1", lambda t: np.eye(t), 0.3, 0.8, 8, 1),
    ("band2_half", "band:2,1,0.5", lambda t: toeplitz([1, 0.5], t), 0.3, 0.8, 10, 2),
    ("band3_equal", "band:3", lambda t: toeplitz([1, 1, 1], t), 0.4, 0.7, 12, 3),
    ("band4_geometric", "band:4,1,0.5,0.25,0.125", lambda t: toeplitz([1, 0.5, 0.25, 0.125], t), 0.5, 0.6, 14, 4),
    ("band2_negative", "band:2,1,-0.4", lambda t: toeplitz([1, -0.4], t), 0.3, 0.8, 10, 2),
    ("band2_sep3", "band:2,1,0.7", lambda t: toeplitz([1, 0.7], t), 0.4, 0.7, 12, 3),
]


def explicit(t, b, seed):
    g = np.random.default_rng(seed)
    m = np.zeros((t, t))
    for i in range(t):
        for j in range(max(0, i - b + 1), i + 1):
            m[i, j] = g.uniform(0.3, 1.0) if i == j else g.uniform(-0.5, 0.8)
    return m


def main():
    out = []
    rng = np.random.default_rng(20261205)
    eps_list = [0.05, 0.25, 0.5, 1.0, 1.5]
    cases = [(n, s, f(t), q, sg, t, k) for (n, s, f, q, sg, t, k) in CASES]
    m = explicit(10, 3, 7)
    cases.append(("explicit_band3", "matrix", m, 0.4, 0.8, 10, 3))
    # Poisson sampling at every step and balls-in-bins: the engine gives an upper bound only.
    cases.append(("poisson_band2", "band:2,1,0.5", toeplitz([1, 0.5], 8), 0.3, 0.8, 8, ("poisson", 0)))
    cases.append(("poisson_band3", "band:3", toeplitz([1, 1, 1], 8), 0.2, 1.0, 8, ("poisson", 0)))
    cases.append(("bins_band2", "band:2,1,0.5", toeplitz([1, 0.5], 8), None, 1.2, 8, ("balls-in-bins", 4)))
    cases.append(("bins_band4", "band:4,1,0.5,0.25,0.125", toeplitz([1, 0.5, 0.25, 0.125], 9), None, 1.8, 9, ("balls-in-bins", 3)))
    # Overlapping columns (not banded, or fewer partitions than bands): the engine accounts the
    # whole run as one Gaussian mechanism, exact at q = 1 with C >= 0, an upper bound otherwise.
    cases.append(("blt_fixed", "blt:0.9:0.3", blt([0.9], [0.3], 8), 1.0, 2.5, 8, 3))
    cases.append(("blt2_sampled", "blt:0.8:0.4,0.5:0.2", blt([0.8, 0.5], [0.4, 0.2], 8), 0.5, 1.5, 8, 2))
    cases.append(("tree_fixed", "tree", tree(8), 1.0, 1.6, 8, 4))
    cases.append(("tree_sampled", "tree", tree(8), 0.4, 1.2, 8, 2))
    cases.append(("band3_sep2", "band:3", toeplitz([1, 1, 1], 9), 1.0, 3.0, 9, 2))
    cases.append(("band2_negative_sep1", "band:2,1,-0.4", toeplitz([1, -0.4], 6), 1.0, 2.0, 6, 1))
    # Cyclic balls-in-bins (jax-privacy's BallsInBinsSampling): an upper bound and the engine's
    # Monte Carlo estimate are checked against these.
    cases.append(("cyclic_band2", "band:2,1,0.5", toeplitz([1, 0.5], 8), None, 1.5, 8, ("cyclic-bins", 4)))
    cases.append(("cyclic_band4", "band:4,1,0.5,0.25,0.125", toeplitz([1, 0.5, 0.25, 0.125], 12), None, 3.5, 12, ("cyclic-bins", 3)))
    cases.append(("cyclic_identity", "band:1", np.eye(12), None, 2.0, 12, ("cyclic-bins", 4)))
    # Not banded under Poisson sampling: the operator-norm bound (an upper bound).
    cases.append(("poisson_blt", "blt:0.7:0.3", blt([0.7], [0.3], 8), 0.3, 1.5, 8, ("poisson", 0)))
    # Cyclic balls-in-bins with BLT and the tree (C >= 0, not banded): the common-mode split.
    cases.append(("cyclic_blt", "blt:0.9:0.3", blt([0.9], [0.3], 12), None, 3.0, 12, ("cyclic-bins", 3)))
    cases.append(("cyclic_tree", "tree", tree(16), None, 4.0, 16, ("cyclic-bins", 4)))
    for name, spec, C, q, sigma, t, k in cases:
        joins = k if isinstance(k, tuple) else ("min-sep", k)
        d, se = deltas(C, q, sigma, joins, eps_list, rng)
        row = {"name": name, "strategy": spec, "q": q, "sigma": sigma, "steps": t,
               "participation": joins[0] if joins[0] == "poisson" else f"{joins[0]}:{joins[1]}",
               "epsilon": eps_list, "delta_mc": d.tolist(), "se": se.tolist(), "samples": N}
        if spec == "matrix":
            row["strategy_matrix"] = [[float(x) for x in C[i, : i + 1]] for i in range(t)]
        out.append(row)
        print(name, [f"{x:.5f}±{s:.5f}" for x, s in zip(d, se)])
    path = Path(__file__).with_name("matrix.jsonl")
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
