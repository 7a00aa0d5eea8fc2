# case: a quantized tensor held by a plain object the model keeps (a namespace)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: held_quantized_tensor\.py: the model's tensor model\.state\.w is quantized \(torch\.qint8\)
import types

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        w = torch.quantize_per_tensor(torch.randn(8, 8), 0.1, 0, torch.qint8)
        self.state = types.SimpleNamespace(w=w)

    def forward(self, x):
        return x @ self.state.w.dequantize()


def get_inputs():
    return [torch.randn(4, 8)]
