# case: the model holds a quantized (qint8) buffer (was UnsupportedFakeTensorException)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: quantized_buffer\.py: the model's tensor w is quantized \(torch\.qint8\), which solar cannot trace
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.quantize_per_tensor(torch.randn(8, 8), 0.1, 0, torch.qint8))

    def forward(self, x):
        return x @ self.w.dequantize()


def get_inputs():
    return [torch.randn(4, 8)]
