# case: a NameError at import
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*name_error_at_import\.py:\d+: importing the model file failed: NameError: name 'undefined_name'
import torch
import torch.nn as nn
x = undefined_name + 1
