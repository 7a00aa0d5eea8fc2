# case: the module starts a non-daemon thread that never ends (the bounds were printed, then the process never exited)
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
# process: subprocess
import threading
import time

import torch
import torch.nn as nn


def spin():
    while True:
        time.sleep(0.5)


threading.Thread(target=spin).start()


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]
