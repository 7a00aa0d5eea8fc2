# case: print() at import, in get_inputs and in forward, with --json (landed in the JSON)
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn
print('importing')

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        print('forward', x.shape)
        return x * 2


def get_inputs():
    print('inputs')
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
