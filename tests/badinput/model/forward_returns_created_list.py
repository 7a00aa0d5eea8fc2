# case: forward returns a list of a tensor it made from nothing, repeated by * (was a 0-FLOP, 0-byte success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: forward_returns_created_list\.py: forward\(\) returned no tensor computed from anything
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return [torch.empty(0)] * 3


def get_inputs():
    return [torch.randn(4, 8)]
