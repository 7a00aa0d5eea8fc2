# case: the model opens a data file that is not there
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*open_missing_data_file\.py:\d+: importing the model file failed: FileNotFoundError
import torch
import torch.nn as nn
import os
WEIGHTS = open(os.path.join(os.path.dirname(__file__), 'missing.bin'), 'rb').read()
