# case: Module.to('cuda') (gave Couldn't swap)
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8).to('cuda')

    def forward(self, x):
        return self.l(x)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
