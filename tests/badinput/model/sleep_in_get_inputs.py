# case: get_inputs sleeps forever
# run: analyze {file} --json --timeout 5
# exit: 2
# line: ^solar: error: .*did not finish within --timeout 5 s \(stopped while get_inputs\(\) at sleep_in_get_inputs\.py:\d+\)
import torch
import torch.nn as nn
import time

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2


def get_inputs():
    time.sleep(10**6)


def get_init_inputs():
    return []
