# case: an indentation error
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*indentation_error\.py:\d+: syntax error: expected an indented block
import torch
import torch.nn as nn
def f():
return 1
