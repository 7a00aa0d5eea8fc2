# case: Model.__init__ does not call super().__init__()
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*building Model\(\*get_init_inputs\(\)\) failed: AttributeError
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        self.w = nn.Linear(8, 8)

    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
