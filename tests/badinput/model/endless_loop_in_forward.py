# case: an endless loop in forward (hung forever)
# run: analyze {file} --json --timeout 5
# exit: 2
# line: ^solar: error: .*did not finish within --timeout 5 s \(stopped while tracing forward\(\) at endless_loop_in_forward\.py:\d+\)
# process: subprocess
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        while True:
            pass


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
