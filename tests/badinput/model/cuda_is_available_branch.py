# case: the model branches on torch.cuda.is_available()
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2 if torch.cuda.is_available() else x * 3


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
