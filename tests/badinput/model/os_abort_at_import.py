# case: os.abort() at import
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*called os\.abort\(\)
import torch
import torch.nn as nn
import os
os.abort()
