"""An in-memory PyTorch module bounded on two GPUs through the Python API."""

import torch

import solar

model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.GELU()).to(torch.bfloat16)
inputs = (torch.randn(8, 4096, dtype=torch.bfloat16),)  # replaced by fake tensors before tracing

for report in solar.analyze(model, inputs, arch=["L4", "H200-SXM"]):
    for level in ("fused", "unfused"):
        bound = report.bounds[level]
        print(f"{report.arch:9} {level:8} {bound.seconds * 1e6:8.2f} µs  {bound.bottleneck}")
