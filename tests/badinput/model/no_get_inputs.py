# case: no get_inputs
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*no_get_inputs\.py: defines no get_inputs
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x
