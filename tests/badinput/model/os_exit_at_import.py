# case: os._exit(0) at import (not a silent success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*os_exit_at_import\.py:\d+: the model file called os\._exit\(0\) during importing the model file
import torch
import torch.nn as nn
import os
os._exit(0)
