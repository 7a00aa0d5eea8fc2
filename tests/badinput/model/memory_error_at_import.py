# case: MemoryError raised at import
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*importing the model file failed: MemoryError$
import torch
import torch.nn as nn
raise MemoryError
