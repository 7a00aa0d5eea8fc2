# case: the module allocates 200 MB of real tensors at import, over --max-memory 100M (a larger one was killed by the kernel without a word)
# run: analyze {file} --arch H100-SXM --json --max-memory 100M
# exit: 2
# line: ^solar: error: allocates_real_memory\.py: importing the model file allocated .* of real memory, over the --max-memory 100 MB limit; solar analyses on fake tensors
# process: subprocess
import torch
import torch.nn as nn

weights = torch.ones(50_000_000)  # 200 MB, written


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]
