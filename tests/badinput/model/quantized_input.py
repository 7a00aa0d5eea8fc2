# case: get_inputs() returns a quantized (qint8) tensor (was UnsupportedFakeTensorException)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: quantized_input\.py: get_inputs\(\) item 0 is a quantized tensor \(torch\.qint8\), which solar cannot trace; give its integer values
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.dequantize() * 2


def get_inputs():
    return [torch.quantize_per_tensor(torch.randn(4, 8), 0.1, 0, torch.qint8)]
