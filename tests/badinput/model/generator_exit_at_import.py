# case: GeneratorExit raised at import
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*failed: GeneratorExit: x
import torch
import torch.nn as nn
raise GeneratorExit('x')
