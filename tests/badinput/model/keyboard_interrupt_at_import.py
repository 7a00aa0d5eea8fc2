# case: the module raises KeyboardInterrupt at import and no signal arrived: the file's error, not an interrupt
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: keyboard_interrupt_at_import\.py:\d+: importing the model file raised KeyboardInterrupt, though no Ctrl-C arrived
import torch
import torch.nn as nn
raise KeyboardInterrupt
