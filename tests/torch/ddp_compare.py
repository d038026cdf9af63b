#!/usr/bin/python3
"""ddp_compare.py A B: exit 0 if the two saved parameter sets are bitwise identical."""
import sys

import torch

a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
bad = [k for k in a if not torch.equal(a[k], b[k])]
diff = max((a[k] - b[k]).abs().max().item() for k in a)
print(f"{len(a)} tensors, {sum(v.numel() for v in a.values())} parameters, {len(bad)} differ, max |diff| {diff:g}")
sys.exit(1 if bad or set(a) != set(b) else 0)
