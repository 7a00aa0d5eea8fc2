# case: an op without a lowering
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*unsupported op aten\.special_bessel_j0\.default at unsupported_op\.py:\d+
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.special.bessel_j0(x)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
