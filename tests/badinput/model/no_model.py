# case: no Model class
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*no_model\.py: defines no Model;
import torch
import torch.nn as nn
def get_inputs():
    return [torch.randn(4)]
