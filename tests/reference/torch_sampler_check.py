#!/usr/bin/env python3
"""Runs the page's copy-ready PyTorch sampler (issue #24) against real PyTorch.

The sampler's text is taken verbatim from www/index.html (#allocation-sampler), so what
users copy is what is checked: with a DataLoader, every epoch yields t batches, every
example exactly once; batch sizes are Binomial(N, 1/t) (mean N/t); each example's step is
uniform over the t steps; with t > N some batches are empty and are still yielded.

Not part of `make test` (PyTorch is a multi-GB download); run it in a venv with torch:
  python -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch
  /tmp/torchvenv/bin/python tests/reference/torch_sampler_check.py
Last run: torch 2.15.0+cu132 from PyPI on CPU: batch size mean 142.86, variance 126.7
(binomial 122.4); example 0's step over 2000 epochs chi2 7.0.
"""
import collections
import html
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
page = open(os.path.join(HERE, "..", "..", "www", "index.html"), encoding="utf-8").read()
code = html.unescape(re.search(r'<pre id="allocation-sampler"><code>(.*?)</code></pre>', page, re.S).group(1))
scope = {}
exec(code, scope)
torch, DataLoader, Sampler = scope["torch"], scope["DataLoader"], scope["RandomAllocationSampler"]
from torch.utils.data import TensorDataset  # noqa: E402

N, t, EPOCHS = 1000, 7, 200
ds = TensorDataset(torch.arange(N))


def collate(batch):
    # The page's note: a batch can be empty, so the collate_fn must accept [].
    return torch.tensor([b[0].item() for b in batch], dtype=torch.long) if batch else torch.empty(0, dtype=torch.long)


loader = DataLoader(ds, batch_sampler=Sampler(N, t, generator=torch.Generator().manual_seed(0)), collate_fn=collate)
sizes = []
for _ in range(EPOCHS):
    batches = list(loader)
    assert len(batches) == t == len(loader)
    assert sorted(torch.cat(batches).tolist()) == list(range(N)), "every example exactly once per epoch"
    sizes += [len(b) for b in batches]
mean = sum(sizes) / len(sizes)
var = sum((x - mean) ** 2 for x in sizes) / len(sizes)
p = 1.0 / t
assert abs(mean - N / t) < 1e-9, mean  # the sizes of one epoch sum to N
assert 0.75 * N * p * (1 - p) < var < 1.3 * N * p * (1 - p), var  # Binomial(N, 1/t)
counts = collections.Counter()
s = Sampler(N, t, generator=torch.Generator().manual_seed(1))
for _ in range(2000):
    for j, b in enumerate(s):
        if 0 in b:
            counts[j] += 1
chi2 = sum((counts[j] - 2000 / t) ** 2 / (2000 / t) for j in range(t))
assert chi2 < 22.5, (chi2, counts)  # chi-square, 6 degrees of freedom, p ~ 0.001
empty = list(Sampler(3, 10, generator=torch.Generator().manual_seed(2)))
assert len(empty) == 10 and sum(map(len, empty)) == 3 and any(len(b) == 0 for b in empty)
print(f"ok: torch {torch.__version__}; batch size mean {mean:.2f} (N/t = {N / t:.2f}), variance {var:.1f} "
      f"(binomial {N * p * (1 - p):.1f}); example 0's step over 2000 epochs {[counts[j] for j in range(t)]} (chi2 {chi2:.1f})")
