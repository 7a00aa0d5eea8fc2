# case: sys.exit(3) at import (a message, not a bare exit 3)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*sys_exit_3_at_import\.py:\d+: the model file called sys\.exit\(3\)
import torch
import torch.nn as nn
import sys
sys.exit(3)
