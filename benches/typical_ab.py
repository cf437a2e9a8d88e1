#!/usr/bin/env python3
"""Two builds of the tight ε on the typical class, side by side (issue 64: q ≥ 1e-3,
T ≤ 10⁵, δ ≥ 1e-10; the 200 runs of `cargo bench --bench engine -- class_typical`).

    python3 benches/typical_ab.py OLD_SWEEP NEW_SWEEP [ROUNDS]

OLD_SWEEP and NEW_SWEEP are each build's `target/release/examples/typical_sweep` (build it
with `cargo build --release --example typical_sweep`; an older commit: a `git worktree` with
examples/typical_sweep.rs copied in). The builds run alternately, ROUNDS times (default 2),
each run timed in-process (best of two). Prints per round the median, 90th percentile, worst
and sum of each build's times, then every run whose brackets do not overlap, whose new
bracket is outside the width rule (0.1 % of ε, or 1e-4 absolute), or wider than twice the
old one and the goal (0.04 %), and the runs that moved most.
"""
import subprocess
import sys


def sweep(binary):
    out = subprocess.run([binary], capture_output=True, text=True, check=True).stdout
    runs = {}
    for line in out.splitlines():
        p = line.split()
        key = tuple(p[:4])
        if p[5] == "refused:":
            runs[key] = (float(p[4]), None, None)
        else:
            runs[key] = (float(p[4]), float(p[5]), float(p[6]))
    return runs


def stats(runs):
    t = sorted(v[0] for v in runs.values())
    n = len(t)
    return f"median {t[n // 2]:.2f} ms, p90 {t[int(n * 0.9)]:.2f} ms, worst {t[-1]:.2f} ms, sum {sum(t):.0f} ms"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    last = None
    for r in range(rounds):
        a, b = sweep(old), sweep(new)
        print(f"round {r + 1}: old {stats(a)}")
        print(f"round {r + 1}: new {stats(b)}")
        last = (a, b)
    a, b = last
    bad = 0
    for k, (ta, la, ua) in a.items():
        tb, lb, ub = b[k]
        if la is None or lb is None:
            if (la is None) != (lb is None):
                bad += 1
                print("refusal differs:", " ".join(k), a[k], b[k])
            continue
        wa, wb = (ua - la) / ua, (ub - lb) / ub
        overlap = lb <= ua and la <= ub
        rule = wb <= 1e-3 or ub - lb <= 1e-4
        if not overlap or not rule or (wb > 2 * wa and wb > 4e-4):
            bad += 1
            print(f"check {' '.join(k)}: old [{la}, {ua}] {wa:.2e}, new [{lb}, {ub}] {wb:.2e}"
                  f"{'' if overlap else ' DISJOINT'}{'' if rule else ' OUTSIDE THE RULE'}")
    moved = sorted((b[k][0] - a[k][0], k) for k in a)
    print("slower:", ", ".join(f"{' '.join(k)} {d:+.1f} ms" for d, k in moved[-5:][::-1]))
    print("faster:", ", ".join(f"{' '.join(k)} {d:+.1f} ms" for d, k in moved[:5]))
    print(f"{len(a)} runs; {bad} to check")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
