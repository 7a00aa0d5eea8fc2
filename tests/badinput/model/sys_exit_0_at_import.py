# case: sys.exit(0) at import (not a silent success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*sys_exit_0_at_import\.py:\d+: the model file called sys\.exit\(0\) during importing the model file
import torch
import torch.nn as nn
import sys
sys.exit(0)
