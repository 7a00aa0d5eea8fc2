# case: x.numpy() in forward
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*torch\.export could not trace the model
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.from_numpy(x.numpy() * 2)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
