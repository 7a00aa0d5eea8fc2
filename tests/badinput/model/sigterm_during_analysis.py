# case: SIGTERM while the model is being imported
# run: analyze {file} --json
# exit: 143
# line: ^solar: terminated$
# signal: TERM after 8
import torch
import torch.nn as nn
import time
time.sleep(120)
