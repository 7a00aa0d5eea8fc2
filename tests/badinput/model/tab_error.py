# case: tabs and spaces mixed inconsistently
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*tab_error\.py:\d+: syntax error: inconsistent use of tabs
import torch
import torch.nn as nn
def f():
        x = 1
	y = 2
