# case: Model = None
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*building Model\(\*get_init_inputs\(\)\) failed: TypeError: 'NoneType' object is not callable
import torch
import torch.nn as nn
Model = None


def get_inputs():
    return [torch.randn(4)]
