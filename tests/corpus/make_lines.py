#!/usr/bin/env python3
"""Write tests/corpus/lines.jsonl: the batch lines the before/after corpus replays.

Every command (epsilon, delta, alpha, gdp, calibrate), every sampling scheme, both adjacencies,
user level, bands, dataset terms and refusals; random draws from a fixed seed plus named runs.
Run once when the corpus should grow; `scripts/corpus.py` replays it against a build."""
import json
import random

rng = random.Random(20261204)
lines = []


def add(**kw):
    lines.append(kw)


# Named runs (MNIST, CIFAR, the issues' P1 and P2).
for acct in ["rdp", "pld", "both"]:
    add(q=256 / 60000, sigma=1.1, steps=14063, delta=1e-5, accountant=acct)
    add(q=0.01024, sigma=1.0, steps=2930, delta=1e-5, accountant=acct)
    add(q=256 / 60000, sigma=1.1, steps=14063, epsilon=2.0, accountant=acct)
    add(dataset_size=60000, batch_size=256, epochs=60, sigma=1.1, delta=1e-5, accountant=acct)
add(dataset_size=10_000_000, batch_size=1024, epochs=3, sigma=0.8, delta=1e-8, accountant="pld")
# alpha lines
for a in [1.5, 2, 8.1, 32, 256.5, 1e4]:
    add(q=0.01, sigma=1.1, alpha=a)
# bands
add(q=0.004267, sigma=1.1, steps=14063, delta=1e-5, bands=4)
add(q=0.004267, sigma=1.1, steps=14063, delta=1e-5, bands=4, accountant="pld")
add(dataset_size=60000, batch_size=256, epochs=60, sigma=1.1, delta=1e-5, bands=4, accountant="pld")
add(dataset_size=600, batch_size=256, epochs=60, sigma=1.1, delta=1e-5, bands=4)
# gdp
for q, s, t in [(1, 1, 100), (1, 2, 400), (0.01, 1.1, 1000), (256 / 60000, 1.1, 14063), (0.05, 3, 200)]:
    add(command="gdp", q=q, sigma=s, steps=t)
# Poisson random draws: exact RDP (both directions), PLD on moderate runs.
for _ in range(80):
    q = 10 ** rng.uniform(-4, -0.3)
    s = rng.uniform(0.6, 5)
    t = int(10 ** rng.uniform(0, 4))
    d = 10 ** rng.uniform(-10, -3)
    add(q=q, sigma=s, steps=t, delta=d)
for _ in range(30):
    q = 10 ** rng.uniform(-4, -0.3)
    s = rng.uniform(0.6, 5)
    t = int(10 ** rng.uniform(0, 4))
    e = 10 ** rng.uniform(-1, 1)
    add(q=q, sigma=s, steps=t, epsilon=e)
for _ in range(30):
    q = 10 ** rng.uniform(-3, -1)
    s = rng.uniform(0.8, 3)
    t = int(10 ** rng.uniform(1, 3.5))
    d = 10 ** rng.uniform(-8, -4)
    add(q=q, sigma=s, steps=t, delta=d, accountant=rng.choice(["pld", "both"]))
# Schemes.
for acct in [None, "rdp", "pld", "both"]:
    for sampling in ["poisson", "shuffle", "truncated-poisson", "fixed-size", "random-allocation"]:
        for adj in ["add-remove", "replace-one"]:
            kw = dict(sampling=sampling, adjacency=adj, dataset_size=50000, batch_size=512, epochs=30,
                      sigma=1.0, delta=1e-5)
            if sampling == "truncated-poisson":
                kw["max_batch"] = 603
            if acct:
                kw["accountant"] = acct
            add(**kw)
for k in [2, 4, 10]:
    add(q=0.01, sigma=1.0, steps=100, delta=1e-5, group_size=k)
    add(q=0.01, sigma=1.0, steps=100, delta=1e-5, group_size=k, accountant="rdp")
add(sampling="shuffle", steps_per_epoch=97, epochs=30, sigma=1.0, delta=1e-5)
add(sampling="shuffle", q=0.01, epochs=5, sigma=2.0, delta=1e-6)
add(sampling="random-allocation", steps_per_epoch=64, epochs=1, sigma=1.0, delta=1e-8)
add(sampling="random-allocation", steps_per_epoch=100, epochs=10, sigma=1.5, delta=1e-6)
# Calibration.
add(command="calibrate", q=0.01, steps=1000, delta=1e-5, epsilon=3)
add(command="calibrate", q=0.01, steps=1000, delta=1e-5, epsilon=3, accountant="pld")
add(command="calibrate", q=0.01, steps=1000, delta=1e-5, epsilon=3, accountant="rdp")
add(command="calibrate", q=0.01, sigma=1.0, delta=1e-5, epsilon=3, target="steps")
add(command="calibrate", q=0.01, steps=1000, tpr=0.05, fpr=0.01)
add(command="calibrate", q=0.01, steps=1000, advantage=0.1)
add(command="calibrate", sampling="shuffle", dataset_size=50000, batch_size=512, epochs=30, delta=1e-5, epsilon=3)
add(command="calibrate", dataset_size=50000, batch_size=512, epochs=30, delta=1e-5, epsilon=3)
# Refusals.
add(q=-0.1, sigma=1, steps=10, delta=1e-5)
add(q=0.01, sigma=0, steps=10, delta=1e-5)
add(q=0.01, sigma=1, steps=0, delta=1e-5)
add(q=0.01, sigma=1, steps=10, delta=2)
add(q=0.01, sigma=1, steps=10)
add(q=0.01, sigma=1, steps=10, delta=1e-5, epsilon=1)
add(q=0.01, sigma=1, steps=10, delta=1e-5, bogus=1)
add(q=0.01, sigma=1, steps=10, delta=1e-5, accountant="xyz")
add(q=0.01, sigma=1, steps=10, delta=1e-5, sampling="nope")
add(q=0.01, sigma=1, steps=10, delta=1e-5, command="nope")
add(q=0.01, sigma=1, steps=10, delta=1e-5, tpr=0.1)
add(sampling="truncated-poisson", dataset_size=50000, batch_size=512, epochs=30, sigma=1.0, delta=1e-5)
add(q="0.01", sigma=1, steps=10, delta=1e-5)
add(sampling="truncated-poisson", q=0.01024, dataset_size=50000, steps=2930, sigma=1.0, delta=1e-5, accountant="pld")

# Added 2026-12-05 (after the random draws, so earlier lines keep their places): the δ
# direction where the ε side answers (issue 61 #8), user level at small δ (P2, #7).
add(q=0.3513, sigma=10.3565, steps=1085213, epsilon=0.1212, accountant="pld")
add(q=0.001, sigma=1.0, steps=100000000, epsilon=140.76412973771252, accountant="pld")
for k in [2, 10, 64]:
    add(dataset_size=10000000, batch_size=1024, epochs=3, sigma=0.8, delta=1e-8, accountant="pld", group_size=k)
# Audits of canary scores (issue 65): a spread of scores shifted by 0.6, with and without
# δ and the run; the plan; refusals.
_z = [round((i + 0.5) / 200 * 6 - 3, 6) for i in range(200)]
add(command="audit", in_scores=[x + 0.6 for x in _z], out_scores=_z, delta=1e-5, q=0.01, sigma=1, steps=1000)
add(command="audit", in_scores=[x + 0.6 for x in _z], out_scores=_z)
add(command="audit", in_scores=[-x for x in _z], out_scores=_z, lower_is_member=True, significance=0.1, delta=1e-6)
add(command="audit_plan", q=0.01, sigma=1, steps=1000, delta=1e-5)
add(command="audit", in_scores=[], out_scores=[1.0])
add(command="audit", in_scores=[1.0], out_scores=[0.0], fraction=0.5)
# Correlated noise (issue 67): BandMF under b-min-separated participation, from dataset
# terms, an explicit matrix, calibration, δ at ε; refusals.
add(strategy="band:4,1,0.5,0.25,0.125", q=0.1, sigma=1, steps=101, delta=1e-3)
add(strategy="band:4", dataset_size=60000, batch_size=256, epochs=60, sigma=1.1, delta=1e-5)
add(strategy="matrix", strategy_matrix=[[1.0], [0.5, 1.0], [0.0, 0.5, 1.0], [0.0, 0.0, 0.5, 1.0]], q=0.2, sigma=0.9, delta=1e-3)
add(command="calibrate", strategy="band:2,1,0.5", q=0.1, steps=100, delta=1e-3, epsilon=2)
add(command="delta", strategy="band:3", participation="min-sep:5", q=0.05, sigma=1.2, steps=1000, epsilon=1)
add(strategy="band:4", participation="poisson", q=0.1, sigma=1, steps=100, delta=1e-3)
add(strategy="band:4,1,0.5,0.25,0.125", participation="balls-in-bins:10", steps=100, sigma=4, delta=1e-2)
add(strategy="band:4", participation="min-sep:3", q=0.1, sigma=1, steps=100, delta=1e-3)
add(strategy="tree", q=0.1, sigma=1, steps=100, delta=1e-3)
add(strategy="tree", participation="poisson", q=0.1, sigma=1, steps=100, delta=1e-3)
add(strategy="blt:0.9:0.3,0.5:0.1", participation="min-sep:10", q=1, sigma=4, steps=100, delta=1e-5)
add(strategy="blt:0.99:0.5", dataset_size=60000, batch_size=256, epochs=10, sigma=8, delta=1e-5)
add(command="calibrate", strategy="tree", participation="min-sep:64", q=1, steps=1024, delta=1e-5, epsilon=1)
add(strategy="band:4,1,0.5,0.25,0.125", participation="cyclic-bins:10", steps=100, sigma=4, delta=1e-2)
add(strategy="band:4,1,0.5,0.25,0.125", participation="cyclic-bins:10", steps=100, sigma=4, delta=1e-2, monte_carlo=5000)
add(strategy="band:4,1,0.5,0.25,0.125", participation="balls-in-bins:10", steps=100, sigma=3, delta=1e-2, monte_carlo=5000)
add(command="delta", strategy="band:2,1,0.5", participation="balls-in-bins:4", steps=40, sigma=2, epsilon=1, monte_carlo=5000)
add(command="calibrate", strategy="band:2,1,0.5", participation="cyclic-bins:5", steps=50, delta=1e-3, epsilon=2, monte_carlo=2000)
add(strategy="blt:0.9:0.3", participation="poisson", q=0.01, sigma=3, steps=1000, delta=1e-5)
# Cyclic bins with BLT and the tree: the common-mode split (refused before it).
add(strategy="blt:0.9:0.3,0.5:0.1", participation="cyclic-bins:10", steps=100, sigma=4.5, delta=1e-2)
add(strategy="tree", participation="cyclic-bins:10", steps=100, sigma=4.5, delta=1e-2)
# A correlated run's privacy profile (the page's correlated charts): exact reduction, the
# Gaussian mechanism without amplification, the operator-norm bound, and a refusal (delta).
add(command="profile", strategy="band:4", dataset_size=60000, batch_size=256, epochs=6, sigma=1.1, epsilon=8)
add(command="profile", strategy="blt:0.9:0.3,0.5:0.1", participation="min-sep:10", q=1, sigma=4, steps=100, epsilon=2)
add(command="profile", strategy="band:4,1,0.5,0.25,0.125", participation="poisson", q=0.1, sigma=4.5, steps=100, epsilon=2)
add(command="profile", strategy="band:4", q=0.1, sigma=1, steps=100, delta=1e-5)
# Random allocation at small δ (issue 62 #5): a bracket wider than the 1 % rule, said so.
add(sampling="random-allocation", steps_per_epoch=782, epochs=30, sigma=1.5, delta=1e-10)
with open(__file__.replace("make_lines.py", "lines.jsonl"), "w") as f:
    for kw in lines:
        f.write(json.dumps(kw) + "\n")
print(len(lines), "lines")
