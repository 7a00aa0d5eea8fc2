# case: a 1T-parameter linear layer (fake tensors: nothing allocated)
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(1 << 20, 1 << 20, bias=False)

    def forward(self, x):
        return self.l(x)


def get_inputs():
    return [torch.randn(2, 1 << 20)]


def get_init_inputs():
    return []
