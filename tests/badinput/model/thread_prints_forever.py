# case: the module starts a thread that prints on stdout and stderr forever (its lines used to land in the --json output)
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
# process: subprocess
import sys
import threading
import time

import torch
import torch.nn as nn


def chatter():
    while True:
        print("a line from the model's thread")
        print("another on stderr", file=sys.stderr)
        time.sleep(0.01)


threading.Thread(target=chatter).start()


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]
