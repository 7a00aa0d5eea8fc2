"""A Med-DDPM-like 3D diffusion U-Net (3D convolutions, GroupNorm, SiLU, a timestep embedding, two
resolutions with a skip connection) denoising one BATCH x 2 x VOLUME^3 volume (image + condition
mask). KernelBench format. The study examples/studies/unet3d.py varies the integer switches:

TF32: 1 lets convolutions use TF32 (PyTorch's default cudnn.allow_tf32), 0 keeps them fp32;
BF16: 1 runs the model in bf16; CHANNELS_LAST: 1 gives inputs and weights the channels-last
(NDHWC) memory format."""

import math

import torch
import torch.nn.functional as F
from torch import nn

BATCH = 1
VOLUME = 64
BASE = 32
TF32 = 1
BF16 = 0
CHANNELS_LAST = 0

torch.backends.cudnn.allow_tf32 = bool(TF32)
DTYPE = torch.bfloat16 if BF16 else torch.float32
FORMAT = torch.channels_last_3d if CHANNELS_LAST else torch.contiguous_format


class Block(nn.Module):
    """GroupNorm -> SiLU -> Conv3d, twice, with the timestep added in between and a residual."""

    def __init__(self, cin: int, cout: int, tdim: int):
        super().__init__()
        self.norm1 = nn.GroupNorm(8, cin)
        self.conv1 = nn.Conv3d(cin, cout, 3, padding=1)
        self.time = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(8, cout)
        self.conv2 = nn.Conv3d(cout, cout, 3, padding=1)
        self.skip = nn.Conv3d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time(t)[:, :, None, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        tdim = 4 * BASE
        self.tmlp = nn.Sequential(nn.Linear(BASE, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.stem = nn.Conv3d(2, BASE, 3, padding=1)
        self.down1 = Block(BASE, BASE, tdim)
        self.pool = nn.Conv3d(BASE, BASE, 3, stride=2, padding=1)
        self.mid = Block(BASE, 2 * BASE, tdim)
        self.up = nn.ConvTranspose3d(2 * BASE, BASE, 2, stride=2)
        self.up1 = Block(2 * BASE, BASE, tdim)
        self.out = nn.Sequential(nn.GroupNorm(8, BASE), nn.SiLU(), nn.Conv3d(BASE, 1, 3, padding=1))
        self.to(dtype=DTYPE, memory_format=FORMAT)

    def embed(self, t):
        half = BASE // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        args = t.float()[:, None] * freqs[None]
        return torch.cat((args.sin(), args.cos()), dim=-1).to(DTYPE)

    def forward(self, x, t):
        temb = self.tmlp(self.embed(t))
        h0 = self.down1(self.stem(x), temb)
        h1 = self.mid(self.pool(h0), temb)
        h = self.up1(torch.cat((self.up(h1), h0), dim=1), temb)
        return self.out(h)


def get_inputs():
    x = torch.randn(BATCH, 2, VOLUME, VOLUME, VOLUME, dtype=DTYPE).to(memory_format=FORMAT)
    t = torch.randint(0, 1000, (BATCH,))
    return [x, t]


def get_init_inputs():
    return []
