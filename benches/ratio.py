"""Prints our criterion medians next to dp_accounting's default-grid PLD on the same
runs, with the ratio, from the files `make bench` just wrote (one run, one machine)."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
theirs = json.load(open(os.path.join(HERE, "..", "target", "dp_accounting_times.json")))
for name, t in theirs.items():
    est = os.path.join(HERE, "..", "target", "criterion", name, "new", "estimates.json")
    ours = json.load(open(est))["median"]["point_estimate"] / 1e6
    print(f"{name}: sgm-rdp {ours:.2f} ms, dp_accounting PLD (default grid 1e-4) {t['ms']:.1f} ms"
          f" (epsilon {t['epsilon']:.6f}): time ratio dp_accounting/sgm-rdp {t['ms'] / ours:.1f}")
