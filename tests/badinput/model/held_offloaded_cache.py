# case: a transformers DynamicCache built with offloading=True, passed to forward()
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: held_offloaded_cache\.py: args\[1\] is a transformers cache with offloading=True \(DynamicCache\): .*offloading=False
import torch
import torch.nn as nn
from transformers import DynamicCache


class Model(nn.Module):
    def forward(self, x, cache):
        keys, values = cache.update(x, x, 0)
        return keys.sum() + values.sum()


def get_inputs():
    return [torch.randn(1, 2, 1, 8), DynamicCache(offloading=True)]
