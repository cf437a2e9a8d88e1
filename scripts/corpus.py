#!/usr/bin/env python3
"""The before/after batch corpus: replay tests/corpus/lines.jsonl through `sgm-rdp batch` and
compare with tests/corpus/expected.jsonl, the answers of the last accepted build.

    python3 scripts/corpus.py            # compare (make test runs this); exit 1 on any drift
    python3 scripts/corpus.py --record   # accept the current build's answers (say why in the commit)
    python3 scripts/corpus.py --bin PATH # another build (default: cargo run --features cli --bin sgm-rdp)
    python3 scripts/corpus.py --answers FILE  # another surface's answers (the e2e writes the JS API's)

Rules: strings (error messages, labels) and key sets identical; exact-RDP figures within 1e-9
relative (the optimal order α within 1e-6: ε is flat at its optimum); tight figures (a line whose
answer carries a `_lower` end, a band or a PLD field, or names the tight accountant) within 1 %
relative of the expected value, and every [lower, upper] pair must still overlap the
expected pair (both are certified, so both contain the truth) — except where a calibration's σ
moved (within 2e-4 relative, the search's tolerance): its figures are for another run, and
its ε must still meet the target. Objects and lists inside an answer
follow the same rules, element by element."""
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINES = ROOT / "tests/corpus/lines.jsonl"
EXPECTED = ROOT / "tests/corpus/expected.jsonl"
RDP_TOL = 1e-9
TIGHT_TOL = 1e-2
# The optimal Rényi order: ε is flat at its optimum, so a 1e-12 change in ε (another libm, the
# wasm's) moves the order by ~1e-6 relatively while ε stays within RDP_TOL.
ORDER_TOL = 1e-6
ORDER_KEYS = ("alpha", "grid_alpha")


def run(binary):
    cmd = [binary, "batch"] if binary else ["cargo", "run", "--quiet", "--features", "cli", "--bin", "sgm-rdp", "--", "batch"]
    out = subprocess.run(cmd, cwd=ROOT, input=LINES.read_bytes(), capture_output=True, check=True)
    return out.stdout.decode().splitlines()


def tight_line(obj):
    keys = any(k.endswith("_lower") or "pld" in k or "band" in k or k.startswith("mu") for k in obj)
    return keys or obj.get("accountant") in ("pld", "both")


def pairs(obj):
    """(upper key, lower key) pairs present in an answer."""
    return [(k[: -len("_lower")], k) for k in obj if k.endswith("_lower") and k[: -len("_lower")] in obj]


def close(x, y, tight, path):
    """None when y matches x under the rules (objects and lists element by element)."""
    if isinstance(x, dict) and isinstance(y, dict):
        if set(x) != set(y):
            return f"{path}: keys differ: -{sorted(set(x) - set(y))} +{sorted(set(y) - set(x))}"
        for k in x:
            why = close(x[k], y[k], tight, f"{path}.{k}" if path else k)
            if why:
                return why
        return None
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            return f"{path}: {len(x)} items -> {len(y)}"
        for i, (u, v) in enumerate(zip(x, y)):
            why = close(u, v, tight, f"{path}[{i}]")
            if why:
                return why
        return None
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y))
    if numbers:
        if x == y:
            return None
        scale = max(abs(x), abs(y), 1e-300)
        rel = abs(x - y) / scale
        tol = TIGHT_TOL if tight else ORDER_TOL if path.split(".")[-1] in ORDER_KEYS else RDP_TOL
        if tight and abs(x - y) <= 1e-9:
            return None  # a fit measure (regret) at numerical zero
        if not math.isfinite(rel) or rel > tol:
            return f"{path}: {x} -> {y} (relative {rel:.3g} > {tol})"
        return None
    if x != y:
        return f"{path}: {json.dumps(x)[:120]} -> {json.dumps(y)[:120]}"
    return None


def compare(old, new):
    """None when new is identical to old, "tight" when it moved within the rules, else a reason."""
    a, b = json.loads(old), json.loads(new)
    if a == b:
        return None
    why = close(a, b, tight_line(a), "")
    if why:
        return why
    if a.get("command") == "calibrate" and a.get("sigma") != b.get("sigma"):
        # σ is the answer: its figures are for another run, so their brackets need not
        # overlap; σ may move within the search's tolerance (1e-4 relative, one step each
        # way), and the new answer must still meet its target.
        rel = abs(b["sigma"] - a["sigma"]) / a["sigma"]
        if rel > 2e-4:
            return f"sigma {a['sigma']} -> {b['sigma']} (relative {rel:.3g} > 2e-4)"
        target = b.get("target_epsilon")
        if target is not None and not b["epsilon"] <= target:
            return f"calibrated epsilon {b['epsilon']} above the target {target}"
        return "tight"
    for up, lo in pairs(a):
        if isinstance(a[up], (int, float)) and isinstance(b[lo], (int, float)):
            if b[lo] > a[up] * (1 + 1e-12) or a[lo] > b[up] * (1 + 1e-12):
                return f"brackets [{a[lo]}, {a[up]}] and [{b[lo]}, {b[up]}] do not overlap"
    return "tight"


def main():
    args = sys.argv[1:]
    binary = args[args.index("--bin") + 1] if "--bin" in args else None
    # --answers FILE: another surface's answers to the same lines (the JS API's, from the e2e).
    answers = args[args.index("--answers") + 1] if "--answers" in args else None
    got = Path(answers).read_text().splitlines() if answers else run(binary)
    lines = LINES.read_text().splitlines()
    if len(got) != len(lines):
        sys.exit(f"corpus: {len(lines)} lines in, {len(got)} out")
    if "--record" in args:
        EXPECTED.write_text("\n".join(got) + "\n")
        print(f"corpus: recorded {len(got)} answers in {EXPECTED.relative_to(ROOT)}")
        return
    expected = EXPECTED.read_text().splitlines()
    if len(expected) != len(lines):
        sys.exit(f"corpus: {len(lines)} lines but {len(expected)} expected answers (--record?)")
    same = moved = 0
    bad = []
    for i, (old, new) in enumerate(zip(expected, got)):
        why = compare(old, new)
        if why is None:
            same += 1
        elif why == "tight":
            moved += 1
        else:
            bad.append(f"  line {i + 1} {lines[i]}\n    {why}")
    print(f"corpus: {len(lines)} lines: {same} identical, {moved} tight figures moved within the rule, {len(bad)} drifted")
    if bad:
        print("\n".join(bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
