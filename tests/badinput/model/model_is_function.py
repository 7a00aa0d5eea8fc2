# case: Model is a function returning an int
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*model_is_function\.py: Model\(\.\.\.\) is not a torch\.nn\.Module
import torch
import torch.nn as nn
def Model():
    return 3


def get_inputs():
    return [torch.randn(4)]
