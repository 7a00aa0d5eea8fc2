# case: a syntax error
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*syntax_error\.py:\d+: syntax error
import torch
import torch.nn as nn
def f(:
    pass
