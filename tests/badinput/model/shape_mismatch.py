# case: a matmul of mismatched shapes (printed 20+ lines of torch log)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*shape_mismatch\.py:\d+: torch\.export could not trace the model: RuntimeError: a and b must have same reduction dim
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x @ x


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
