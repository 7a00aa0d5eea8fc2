# case: a BaseException subclass raised at import
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*importing the model file failed: Stop: halt
import torch
import torch.nn as nn
class Stop(BaseException):
    pass


raise Stop('halt')
