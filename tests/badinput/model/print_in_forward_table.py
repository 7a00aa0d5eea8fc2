# case: print() in forward with the table output
# run: analyze {file} --arch H100-SXM
# exit: 0
# stdout: ^(?![\s\S]*PRINTED-BY-MODEL)[\s\S]*bounds
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        print('PRINTED-BY-MODEL')
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
