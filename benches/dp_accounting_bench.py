"""dp_accounting's per-step RDP on the rdp_grid_156 grid, timed like criterion (median of runs)."""
import statistics
import time

from dp_accounting.rdp import rdp_privacy_accountant as rpa

orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]
assert len(orders) == 156


def run():
    return [rpa._compute_rdp_poisson_subsampled_gaussian(0.01, 1.1, [a]) for a in orders]


run()
times = []
for _ in range(15):
    t0 = time.perf_counter()
    run()
    times.append(time.perf_counter() - t0)
med = statistics.median(times)
print(f"dp_accounting rdp_grid_156 (q=0.01, sigma=1.1, 156 orders): median {med * 1e3:.2f} ms over {len(times)} runs")
