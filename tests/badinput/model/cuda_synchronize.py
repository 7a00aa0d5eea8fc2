# case: torch.cuda.synchronize() in forward without CUDA
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*cuda_synchronize\.py:\d+: torch\.export could not trace the model
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        torch.cuda.synchronize()
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
