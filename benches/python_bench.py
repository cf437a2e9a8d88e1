#!/usr/bin/env python3
"""`make bench`: sgm_rdp.epsilon(..., accountant="pld") on MNIST against dp_accounting's
PLDAccountant (its default grid, 1e-4) in the same Python process, and the bindings'
overhead per call (a run answered in closed form: q = 1)."""
import time

import sgm_rdp
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

Q, SIGMA, T, DELTA = 256 / 60000, 1.1, 14063, 1e-5


def best(f, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        v = f()
        times.append(time.perf_counter() - t0)
    return min(times), v


def ours():
    return sgm_rdp.epsilon(SIGMA, Q, T, DELTA, accountant="pld").upper


def theirs():
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA)), T)
    return acc.get_epsilon(DELTA)


t_ours, e_ours = best(ours, 5)
t_theirs, e_theirs = best(theirs, 3)
print(f"python_pld_mnist: sgm_rdp {t_ours * 1e3:.1f} ms (eps {e_ours:.6f}, certified upper), "
      f"dp_accounting PLDAccountant {t_theirs * 1e3:.1f} ms (eps {e_theirs:.6f}); "
      f"ratio {t_theirs / t_ours:.1f}x")
n = 20000
t0 = time.perf_counter()
for _ in range(n):
    sgm_rdp.epsilon(2.0, 1.0, 10, DELTA)
per_call = (time.perf_counter() - t0) / n
t0 = time.perf_counter()
for _ in range(n):
    sgm_rdp._sgm_rdp.epsilon_phases([(1.0, 2.0, 10, "add-remove", 0, 0)], DELTA)
engine = (time.perf_counter() - t0) / n
print(f"python_call_overhead: {per_call * 1e6:.1f} us per epsilon() call answered in closed form "
      f"(q = 1; the engine call alone through the phase binding: {engine * 1e6:.1f} us); target <= 50 us")
