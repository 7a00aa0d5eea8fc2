# case: the module forks at import; the child writes on the stderr descriptor and calls os._exit(0) later (it used to print "solar: error: ... os._exit(0)" after the parent's report)
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
# process: subprocess
import os
import time

import torch
import torch.nn as nn

if os.fork() == 0:
    time.sleep(2)
    os.write(2, b"a line from the forked child\n")
    os._exit(0)


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]
