#!/usr/bin/env python3
"""Time the tight (PLD) epsilon over random draws of the domain, each call its own process.

    python3 benches/epsilon_sweep.py BIN            # 300 draws over the whole domain
    python3 benches/epsilon_sweep.py BIN --corner   # 40 draws of tiny q at small sigma, long runs
    python3 benches/epsilon_sweep.py BIN --corner-large-delta   # the same corner, delta 1e-5..0.1
    python3 benches/epsilon_sweep.py BIN --near     # 40 draws beside the corner: q 1e-8..1e-6
    python3 benches/epsilon_sweep.py BIN --mid      # 40 draws of q 2e-6..2e-5 at sigma 0.35..0.5, long runs
    python3 benches/epsilon_sweep.py BIN [...] --dump FILE      # also every draw's time and bracket

The whole domain: q in [1e-9, 1], sigma in [0.3, 1e3], T in [1, 1e9], delta in [1e-15, 0.1],
log-uniform (seed 20261126), keeping the draws whose exact-RDP epsilon is at most 1e3 (the
domain the tight accountant is built to answer). The corner: q in [1e-9, 1e-7], sigma in
[0.3, 0.8], T in [1e7, 1e9], delta in [1e-15, 1e-5] (seed 7); with --corner-large-delta,
delta in [1e-5, 0.1] (seed 8). Beside it (--near): q in [1e-8, 1e-6], sigma in [0.3, 0.6],
T in [1e6, 1e9], delta in [1e-15, 0.1] (seed 9), where the whole-domain draws are few. With --mid:
q in [2e-6, 2e-5], sigma in [0.35, 0.5], T in [1e8, 1e9], delta in [1e-12, 1e-5] (seed 10), the
neighbourhood of the whole-domain sweep's one bracket wider than the rule. Prints how many answered, how many
within the width rule (0.1 % of epsilon, or 1e-4 where epsilon < 0.1), the slowest calls and
the most memory (GNU time), and the refusals and wide brackets by name.
"""
import random
import re
import subprocess
import sys


def draws(corner, large_delta=False, near=False, mid=False):
    r = random.Random(10 if mid else 9 if near else 8 if large_delta else 7 if corner else 20261126)
    for _ in range(40 if corner else 300):
        if mid:
            q = 10 ** (-5.7 + r.random())
            s = 0.35 + 0.15 * r.random()
            t = int(10 ** (8 + r.random()))
            d = 10 ** (-12 + 7 * r.random())
        elif near:
            q = 10 ** (-8 + 2 * r.random())
            s = 0.3 + 0.3 * r.random()
            t = int(10 ** (6 + 3 * r.random()))
            d = 10 ** (-15 + 14 * r.random())
        elif corner:
            q = 10 ** (-9 + 2 * r.random())
            s = 0.3 + 0.5 * r.random()
            t = int(10 ** (7 + 2 * r.random()))
            d = 10 ** (-5 + 4 * r.random()) if large_delta else 10 ** (-15 + 10 * r.random())
        else:
            q = 10 ** (-9 * r.random())
            s = 10 ** (-0.52 + 3.52 * r.random())
            t = max(1, round(10 ** (9 * r.random())))
            d = 10 ** (-15 + 14 * r.random())
        yield "%.4g" % q, "%.4g" % s, str(t), "%.3g" % d


def main():
    large, near = "--corner-large-delta" in sys.argv[2:], "--near" in sys.argv[2:]
    mid = "--mid" in sys.argv[2:]
    bin_, corner = sys.argv[1], large or near or mid or "--corner" in sys.argv[2:]
    rows = []
    for q, s, t, d in draws(corner, large, near, mid):
        args = ["--q", q, "--sigma", s, "--steps", t, "--delta", d]
        if not corner:
            rdp = subprocess.run([bin_, "epsilon", *args], capture_output=True, text=True).stdout
            m = re.search(r"epsilon = ([0-9.e+-]+)", rdp)
            if m and float(m[1]) > 1e3:
                continue
        p = subprocess.run(
            ["/usr/bin/time", "-f", "T %e %M", bin_, "epsilon", *args, "--accountant", "pld"],
            capture_output=True,
            text=True,
        )
        tm = re.search(r"T ([0-9.]+) (\d+)", p.stderr)
        b = re.search(r"bracket \[([0-9.e+-]+), ([0-9.e+-]+)\]", p.stdout)
        rows.append((" ".join((q, s, t, d)), float(tm[1]), int(tm[2]), b and (float(b[1]), float(b[2]))))
    answered = [r for r in rows if r[3]]
    within = [r for r in answered if r[3][1] - r[3][0] <= 1e-3 * r[3][1] + 1e-12 or (r[3][1] < 0.1 and r[3][1] - r[3][0] <= 1e-4)]
    print(f"{len(rows)} draws, {len(answered)} answered, {len(within)} within the rule, most memory {max(r[2] for r in rows) / 1024:.0f} MB")
    for label, part in (("answered", answered), ("refused", [r for r in rows if not r[3]])):
        for r in sorted(part, key=lambda r: -r[1])[:3]:
            print(f"  slowest {label}: {r[1]:.2f} s  q sigma T delta = {r[0]}  {r[3] or ''}")
    print("refused:", [r[0] for r in rows if not r[3]])
    print("wider than the rule:", [(r[0], r[3]) for r in answered if r not in within])
    # --dump FILE: every draw, its time and bracket, one per line (to compare two builds).
    if "--dump" in sys.argv[2:]:
        with open(sys.argv[sys.argv.index("--dump") + 1], "w") as f:
            for r in rows:
                f.write(f"{r[0]}\t{r[1]:.2f}\t{r[3]}\n")


if __name__ == "__main__":
    main()
