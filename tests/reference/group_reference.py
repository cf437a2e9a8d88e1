#!/usr/bin/env python3
"""Independent reference brackets for user-level (group) privacy.

A user with k examples, each sampled independently with rate q, is the
mixture-of-Gaussians mechanism with sensitivities j = 0..k and weights
C(k, j) q^j (1-q)^(k-j) (Ganesh, arXiv 2401.10294). Google's dp_accounting
(PyPI `dp-accounting` 0.6.0, a separate implementation that shares none of our
code) builds its PLD with `from_mixture_gaussian_mechanism`, composes by FFT:
* pessimistic estimate (connect-the-dots): an upper bound on the tight epsilon;
* optimistic estimate (rounding down, no connect-the-dots): a lower bound.
Both at a fine grid; our certified bracket must overlap [lower, upper] and our
upper must be within 0.5 % of theirs.

Writes tests/reference/group.jsonl. Run: benches/.venv/bin/python tests/reference/group_reference.py
"""
import json
import math
import os

from dp_accounting.pld import privacy_loss_distribution as pld_lib

HERE = os.path.dirname(os.path.abspath(__file__))
H = 2e-4

CASES = [
    # TF Privacy's statement test: n = 10000, batch 64, 5 epochs, sigma_eff = 1, delta 1e-6.
    (64 / 10000, 1.0, 782, 1e-6, 2),
    (64 / 10000, 1.0, 782, 1e-6, 3),
    (64 / 10000, 1.0, 782, 1e-6, 4),
    (256 / 60000, 1.1, 1000, 1e-5, 2),
    (256 / 60000, 1.1, 1000, 1e-5, 8),
    (0.01, 2.0, 300, 1e-5, 5),
    (0.1, 3.0, 50, 1e-6, 3),
    # A large-dataset run at small delta (issue 61's P2: N 10^7, B 1024, 3 epochs, sigma 0.8,
    # delta 1e-8; T = 3 * ceil(N / B)), users of 2, 10 and 64 examples.
    (1024 / 1e7, 0.8, 29297, 1e-8, 2),
    (1024 / 1e7, 0.8, 29297, 1e-8, 10),
    (1024 / 1e7, 0.8, 29297, 1e-8, 64),
]


def eps(q, sigma, steps, delta, k, pessimistic):
    probs = [math.comb(k, j) * q**j * (1 - q) ** (k - j) for j in range(k + 1)]
    pld = pld_lib.from_mixture_gaussian_mechanism(
        standard_deviation=sigma,
        sensitivities=list(range(k + 1)),
        sampling_probs=probs,
        pessimistic_estimate=pessimistic,
        value_discretization_interval=H,
        use_connect_dots=pessimistic,
    )
    return pld.self_compose(steps).get_epsilon_for_delta(delta)


def main():
    import dp_accounting  # noqa: F401

    out = os.path.join(HERE, "group.jsonl")
    with open(out, "w") as f:
        for q, sigma, steps, delta, k in CASES:
            up = eps(q, sigma, steps, delta, k, True)
            lo = eps(q, sigma, steps, delta, k, False)
            row = {"q": q, "sigma": sigma, "steps": steps, "delta": delta,
                   "group_size": k, "upper": up, "lower": lo, "interval": H,
                   "source": "dp_accounting 0.6.0 from_mixture_gaussian_mechanism"}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
