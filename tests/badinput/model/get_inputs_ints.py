# case: get_inputs returns ints (not a 0-FLOP success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs_ints\.py: get_inputs\(\) returned no tensor \(only int\)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y=0):
        return x + 1


def get_inputs():
    return [1, 2]


def get_init_inputs():
    return []
