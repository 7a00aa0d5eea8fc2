# case: SIGTERM while the model is being imported
# run: analyze {file} --json
# exit: 143
# line: ^solar: terminated$
# signal: TERM
import torch
import torch.nn as nn
import os
import time

open(os.environ['SOLAR_BADINPUT_READY'], 'w').close()  # tells the corpus runner to send the signal
time.sleep(120)
