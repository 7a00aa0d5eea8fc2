# case: the module forks at import and the child goes on importing (it must end silently, not analyse and print a second report)
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
# process: subprocess
import os

import torch
import torch.nn as nn

os.fork()


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]
