# case: an exception with no message
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*importing the model file failed: ValueError$
import torch
import torch.nn as nn
raise ValueError()
