# case: a plain object the model keeps holds a tensor and refuses to be copied
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: held_uncopyable\.py: model\.boxes\['a'\] cannot be copied for tracing \(TypeError: no copies\)
import torch
import torch.nn as nn


class Box:
    def __init__(self, t):
        self.t = t

    def __deepcopy__(self, memo):
        raise TypeError("no copies")


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.boxes = {"a": Box(torch.randn(8))}

    def forward(self, x):
        return x + self.boxes["a"].t


def get_inputs():
    return [torch.randn(8)]
