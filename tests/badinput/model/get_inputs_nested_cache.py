# case: get_inputs() passes a transformers cache inside a list instead of as an argument of its own
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: get_inputs_nested_cache\.py: get_inputs\(\) item 1 holds a DynamicCache inside a list; pass an object holding state \(a KV cache\) as an item of its own
import torch
import torch.nn as nn
from transformers import DynamicCache


class Model(nn.Module):
    def forward(self, x, caches):
        keys, values = caches[0].update(x, x, 0)
        return keys.sum() + values.sum()


def get_inputs():
    return [torch.randn(1, 2, 1, 8), [DynamicCache()]]
