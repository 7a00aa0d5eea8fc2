# case: an exception with a multi-line message
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*failed: ValueError: first real line$
import torch
import torch.nn as nn
raise ValueError('\n\nfirst real line\nsecond line')
