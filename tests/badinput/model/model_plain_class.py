# case: Model is a plain class with forward
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*Model\(\.\.\.\) is not a torch\.nn\.Module
import torch
import torch.nn as nn
class Model:
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4)]
