# case: the module raises KeyboardInterrupt at import
# run: analyze {file} --arch H100-SXM --json
# exit: 130
# line: ^solar: interrupted$
import torch
import torch.nn as nn
raise KeyboardInterrupt
