import torch

import broken_helper
