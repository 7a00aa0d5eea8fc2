# case: get_inputs is a list
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs\(\) failed: TypeError: 'list' object is not callable
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x


get_inputs = [torch.randn(4)]
