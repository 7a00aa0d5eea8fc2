# case: the model imports a package that is not installed
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*import_missing_module\.py:\d+: importing the model file failed: ModuleNotFoundError: No module named 'no_such_package_xyz'
import torch
import torch.nn as nn
import no_such_package_xyz
