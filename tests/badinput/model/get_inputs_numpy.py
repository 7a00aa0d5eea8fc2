# case: get_inputs returns a numpy array
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs\(\) item 0 is a ndarray, not a tensor
import torch
import torch.nn as nn
import numpy as np

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2


def get_inputs():
    return [np.zeros((4, 8))]


def get_init_inputs():
    return []
