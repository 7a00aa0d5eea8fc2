# case: Ctrl-C (SIGINT) while the model is being imported
# run: analyze {file} --json
# exit: 130
# line: ^solar: interrupted$
# signal: INT after 8
import torch
import torch.nn as nn
import time
time.sleep(120)
