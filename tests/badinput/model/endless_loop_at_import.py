# case: an endless loop at import (hung forever)
# run: analyze {file} --json --timeout 5
# exit: 2
# line: ^solar: error: .*did not finish within --timeout 5 s \(stopped while importing the model file at endless_loop_at_import\.py:\d+\)
import torch
import torch.nn as nn
while True:
    pass
