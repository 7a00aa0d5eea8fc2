# case: an endless loop that swallows every exception (the watchdog ends it)
# run: analyze {file} --json --timeout 4
# exit: 2
# line: ^solar: error: .*did not finish within --timeout 4 s
# process: subprocess
import torch
import torch.nn as nn
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
