# case: .item() in a loop bound
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*torch\.export could not trace the model
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        for _ in range(int(x.sum().item())):
            x = x + 1
        return x


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
