# case: the model logs warnings
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn
import logging
logging.basicConfig()
logging.warning('hello from the model')

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        logging.getLogger('m').error('in forward')
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
