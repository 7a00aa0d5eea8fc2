# case: an if on a tensor value (printed a partial graph)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*data_dependent_if\.py:\d+: torch\.export could not trace the model: GuardOnDataDependentSymNode: .* the program.s control flow depends on tensor values .*analyse the part before it
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
