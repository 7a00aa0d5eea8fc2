# case: a failing assert at import
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*AssertionError: needs torch 0\.0
import torch
import torch.nn as nn
assert torch.__version__ == '0.0', 'needs torch 0.0'
