# case: solar verify --world-size on a file whose SHARDS is not a dict
# run: verify {file} --world-size 2
# exit: 2
# line: ^solar: error: verify_shards_not_a_dict\.py: SHARDS must be a dict of name -> a dimension
import torch

SHARDS = ["up.weight", 0]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.up(x)


def get_inputs():
    return [torch.randn(2, 4)]
