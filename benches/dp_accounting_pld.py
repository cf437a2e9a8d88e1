"""dp_accounting 0.6.0's PLD accountant on the pld_mnist run (q=256/60000, sigma=1.1,
T=14063, delta=1e-5) at its default grid (1e-4) and finer, timed like criterion
(median of runs), with its epsilon for comparison with ours."""
import statistics
import time

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant as ppa

import json
import os

q, sigma, steps, delta = 256 / 60000, 1.1, 14063, 1e-5
TIMES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "dp_accounting_times.json")


def run(interval, q=q, sigma=sigma, steps=steps):
    acc = ppa.PLDAccountant(value_discretization_interval=interval)
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    acc.compose(event)
    return acc.get_epsilon(delta)


out = {}
for name, args, interval, reps in [
    ("pld_mnist", (q, sigma, steps), 1e-4, 5),
    ("pld_mnist", (q, sigma, steps), 1e-5, 2),
    ("pld_large_dataset", (1e-4, 1.0, 100_000), 1e-4, 3),
]:
    times = []
    eps = None
    for _ in range(reps):
        t0 = time.perf_counter()
        eps = run(interval, *args)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print(f"dp_accounting PLD {name} (grid {interval:g}): epsilon {eps:.6f}, median {med * 1e3:.1f} ms over {reps} runs")
    if interval == 1e-4:
        out[name] = {"ms": med * 1e3, "epsilon": eps}
os.makedirs(os.path.dirname(TIMES), exist_ok=True)
with open(TIMES, "w") as f:
    json.dump(out, f)
