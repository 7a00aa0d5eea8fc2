# case: the module allocates real tensors in an endless loop (the machine ran out of memory; now the watchdog stops it at --max-memory)
# run: analyze {file} --arch H100-SXM --json --max-memory 150M
# exit: 2
# line: ^solar: error: allocates_without_end\.py: importing the model file allocated .* of real memory, over the --max-memory 150 MB limit; solar analyses on fake tensors
# process: subprocess
import torch
import torch.nn as nn

kept = []
while True:
    kept.append(torch.ones(5_000_000))  # 20 MB at a time, written


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]
