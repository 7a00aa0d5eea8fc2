# case: sys.exit('bye') at import
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*sys\.exit\('bye'\)
import torch
import torch.nn as nn
import sys
sys.exit('bye')
