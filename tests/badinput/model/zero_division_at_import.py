# case: 1/0 at import
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*zero_division_at_import\.py:\d+: importing the model file failed: ZeroDivisionError
import torch
import torch.nn as nn
SIZE = 1 // 0
