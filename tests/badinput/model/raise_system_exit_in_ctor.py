# case: SystemExit raised in Model.__init__
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*raise_system_exit_in_ctor\.py:\d+: the model file called sys\.exit\(1\) during building Model
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__(); raise SystemExit(1)

    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
