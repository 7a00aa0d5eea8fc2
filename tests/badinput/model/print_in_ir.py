# case: print() in forward with `solar ir`
# run: ir {file}
# exit: 0
# stdout: ^program print_in_ir \{
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
