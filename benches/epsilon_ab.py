#!/usr/bin/env python3
"""Time two builds of the tight (PLD) epsilon on the same runs, interleaved, best of two each.

    python3 benches/epsilon_ab.py OLD_BIN NEW_BIN RUNS     # RUNS: lines "q sigma T delta"
    python3 benches/epsilon_ab.py OLD_BIN NEW_BIN --slow DUMP... [--over S]

With --slow, the runs are the draws that took more than S seconds (default 0.6) in any of the
`--dump` files of benches/epsilon_sweep.py. Each run is timed OLD, OLD, NEW, NEW back to back
(each call its own process) and the best of each pair kept, so a machine whose speed drifts over
minutes (a shared VM) compares the two builds at the same moment. Prints every run's times and
brackets, then the totals, the slowest call of each build and how many calls took over 1 s.
"""
import re
import subprocess
import sys
import time


def runs_from(argv):
    if argv[0] != "--slow":
        return [line.split() for line in open(argv[0]) if line.strip()]
    over = 0.6
    files = []
    it = iter(argv[1:])
    for a in it:
        if a == "--over":
            over = float(next(it))
        else:
            files.append(a)
    seen = {}
    for f in files:
        for line in open(f):
            run, secs = line.split("\t")[:2]
            if float(secs) > over:
                seen[run] = True
    return [r.split() for r in sorted(seen)]


def timed(bin_, q, s, t, d):
    best, bracket = float("inf"), None
    for _ in range(2):
        t0 = time.perf_counter()
        p = subprocess.run(
            [bin_, "epsilon", "--q", q, "--sigma", s, "--steps", t, "--delta", d, "--accountant", "pld"],
            capture_output=True,
            text=True,
        )
        best = min(best, time.perf_counter() - t0)
        m = re.search(r"bracket \[([^]]*)\]", p.stdout)
        bracket = m[1] if m else p.stderr.strip()[:60]
    return best, bracket


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    old, new = sys.argv[1], sys.argv[2]
    rows = []
    for q, s, t, d in runs_from(sys.argv[3:]):
        a, b = timed(old, q, s, t, d), timed(new, q, s, t, d)
        print(f"{q} {s} {t} {d}  old {a[0]:.2f} s [{a[1]}]  new {b[0]:.2f} s [{b[1]}]", flush=True)
        rows.append((a[0], b[0]))
    if not rows:
        sys.exit("no runs")
    tot = [sum(r[i] for r in rows) for i in (0, 1)]
    mx = [max(r[i] for r in rows) for i in (0, 1)]
    over = [sum(r[i] > 1.0 for r in rows) for i in (0, 1)]
    print(
        f"{len(rows)} runs: total old {tot[0]:.2f} s, new {tot[1]:.2f} s; slowest old {mx[0]:.2f} s, "
        f"new {mx[1]:.2f} s; over 1 s old {over[0]}, new {over[1]}"
    )


if __name__ == "__main__":
    main()
