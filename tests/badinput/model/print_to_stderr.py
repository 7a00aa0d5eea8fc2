# case: the model prints to stderr
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn
import sys
print('noise', file=sys.stderr)

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        print('in forward', file=sys.stderr)
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
