# case: input() at import (no terminal to wait on)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*input_at_import\.py:\d+: importing the model file failed: EOFError
import torch
import torch.nn as nn
N = int(input('size? '))
