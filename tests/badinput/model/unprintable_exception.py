# case: an exception whose __str__ raises
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*failed: Bad: <its message could not be printed>
import torch
import torch.nn as nn
class Bad(Exception):
    def __str__(self):
        raise RuntimeError('no')


raise Bad()
