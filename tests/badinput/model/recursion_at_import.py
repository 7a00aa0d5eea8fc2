# case: infinite recursion at import
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*recursion_at_import\.py:\d+: importing the model file failed: RecursionError
import torch
import torch.nn as nn
def f(n):
    return f(n + 1)


f(0)
