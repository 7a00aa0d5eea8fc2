# case: Ctrl-C (SIGINT) while the model's import runs
# run: analyze {file} --json
# exit: 130
# line: ^solar: interrupted$
# signal: INT
import torch
import torch.nn as nn
import os
import time

open(os.environ['SOLAR_BADINPUT_READY'], 'w').close()  # tells the corpus runner to send the signal
time.sleep(120)
