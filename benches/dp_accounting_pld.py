"""dp_accounting 0.6.0's PLD accountant on the pld_mnist run (q=256/60000, sigma=1.1,
T=14063, delta=1e-5) at its default grid (1e-4) and finer, timed like criterion
(median of runs), with its epsilon for comparison with ours."""
import statistics
import time

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant as ppa

q, sigma, steps, delta = 256 / 60000, 1.1, 14063, 1e-5


def run(interval):
    acc = ppa.PLDAccountant(value_discretization_interval=interval)
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    acc.compose(event)
    return acc.get_epsilon(delta)


for interval, reps in [(1e-4, 5), (1e-5, 2)]:
    times = []
    eps = None
    for _ in range(reps):
        t0 = time.perf_counter()
        eps = run(interval)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print(f"dp_accounting PLD pld_mnist (grid {interval:g}): epsilon {eps:.6f}, median {med * 1e3:.1f} ms over {reps} runs")
