"""The policy-value networks.

``conv3`` (the default) is the small net of the classic AlphaZero-Gomoku, exactly:
input 4 planes; conv3x3 4->32, 32->64, 64->128 with ReLU; policy head conv1x1 128->4, ReLU,
FC 4*H*W -> H*W, log-softmax; value head conv1x1 128->2, ReLU, FC 2*H*W -> 64, ReLU, FC 64 -> 1,
tanh (131,132 parameters on 9x9). ``resnet`` is an optional small residual tower with the same heads.

Either trunk takes either head (``NetConfig.head``): ``fc``, the fully connected heads above, sized
for one board (the default: every model before the key existed has them), or ``pooled``, which
plays any board from MIN_POOLED_SIDE to MAX_BOARD_SIDE with one set of weights: policy conv1x1
C->32, ReLU, conv1x1 32->1, one logit per point, log-softmax; value conv1x1 C->32, ReLU, the
global average and the global max of each channel over the board (64 features, as KataGo pools),
FC 64->64, ReLU, FC 64->1, tanh. A pooled model's width and height are those it was trained on.
``NetConfig`` and the nets' bounds are in nets/config.py (no torch there: a run's config uses them).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from nets.config import NetConfig
from nets.config import MAX_BLOCKS, MAX_BOARD_SIDE, MAX_CHANNELS, MIN_POOLED_SIDE  # noqa: F401 (long defined here)

IN_PLANES = 4
POOLED_CHANNELS = 32  # the pooled heads' 1x1 convolutions
POOLED_HIDDEN = 64  # the pooled value head's hidden layer


class _Heads(nn.Module):
    def __init__(self, trunk_channels: int, width: int, height: int):
        super().__init__()
        size = width * height
        self.policy_conv = nn.Conv2d(trunk_channels, 4, kernel_size=1)
        self.policy_fc = nn.Linear(4 * size, size)
        self.value_conv = nn.Conv2d(trunk_channels, 2, kernel_size=1)
        self.value_fc1 = nn.Linear(2 * size, 64)
        self.value_fc2 = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        p = F.relu(self.policy_conv(x)).flatten(1)
        log_policy = F.log_softmax(self.policy_fc(p), dim=1)
        v = F.relu(self.value_conv(x)).flatten(1)
        value = torch.tanh(self.value_fc2(F.relu(self.value_fc1(v))))
        return log_policy, value.squeeze(1)


class _PooledHeads(nn.Module):
    """Heads for any board size: a logit per point, the value from pooled board features."""

    def __init__(self, trunk_channels: int):
        super().__init__()
        self.policy_conv = nn.Conv2d(trunk_channels, POOLED_CHANNELS, kernel_size=1)
        self.policy_out = nn.Conv2d(POOLED_CHANNELS, 1, kernel_size=1)
        self.value_conv = nn.Conv2d(trunk_channels, POOLED_CHANNELS, kernel_size=1)
        self.value_fc1 = nn.Linear(2 * POOLED_CHANNELS, POOLED_HIDDEN)
        self.value_fc2 = nn.Linear(POOLED_HIDDEN, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        p = self.policy_out(F.relu(self.policy_conv(x))).flatten(1)  # [B, H*W], move = row * W + col
        log_policy = F.log_softmax(p, dim=1)
        v = F.relu(self.value_conv(x))
        pooled = torch.cat([v.mean(dim=(2, 3)), v.amax(dim=(2, 3))], dim=1)
        value = torch.tanh(self.value_fc2(F.relu(self.value_fc1(pooled))))
        return log_policy, value.squeeze(1)


def build_heads(config: NetConfig, trunk_channels: int) -> nn.Module:
    return _Heads(trunk_channels, config.width, config.height) if config.head == "fc" else _PooledHeads(trunk_channels)


class Conv3Net(nn.Module):
    def __init__(self, config: NetConfig):
        super().__init__()
        self.config = config
        self.conv1 = nn.Conv2d(IN_PLANES, 32, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3, padding=1)
        self.conv3 = nn.Conv2d(64, 128, kernel_size=3, padding=1)
        self.heads = build_heads(config, 128)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x: [B, 4, H, W] -> (log-probabilities [B, H*W], values [B] in [-1, 1])."""
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.relu(self.conv3(x))
        return self.heads(x)


class _ResBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class ResNet(nn.Module):
    def __init__(self, config: NetConfig):
        super().__init__()
        self.config = config
        self.stem = nn.Sequential(nn.Conv2d(IN_PLANES, config.channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(config.channels), nn.ReLU())
        self.tower = nn.Sequential(*[_ResBlock(config.channels) for _ in range(config.blocks)])
        self.heads = build_heads(config, config.channels)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.heads(self.tower(self.stem(x)))


def build_net(config: NetConfig) -> nn.Module:
    return Conv3Net(config) if config.arch == "conv3" else ResNet(config)


# Subnormal floats (0 < |x| < the smallest normal number) take a slow path on x86 CPUs. Weight
# decay pulls unused weights towards zero; after an hour of training a 9x9 net had 4,754 subnormal
# weights and a batch of 16 took 18x as long in onnxruntime (2.7x even with them zeroed, from
# subnormal intermediates in its kernels). Trainers zero them in the weights; evaluators and
# trainers treat them as zero in their arithmetic.


def subnormals_as_zero() -> None:
    """Make this thread's CPU float arithmetic flush subnormal inputs and results to zero (FTZ/DAZ;
    per thread, so called where the work runs; threads started afterwards inherit it)."""
    torch.set_flush_denormal(True)


# (integer view, exponent bits, magnitude bits): subnormal = exponent bits 0, magnitude not 0.
# Read from the bits, not by arithmetic, which subnormals_as_zero() makes see them as zero.
_FLOAT_BITS = {torch.float16: (torch.int16, 0x7C00, 0x7FFF), torch.bfloat16: (torch.int16, 0x7F80, 0x7FFF),
               torch.float32: (torch.int32, 0x7F800000, 0x7FFFFFFF),
               torch.float64: (torch.int64, 0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF)}


@torch.no_grad()
def flush_subnormals(tensors) -> int:
    """Set the subnormal entries of floating-point tensors to zero, in place; returns how many."""
    flushed = 0
    for tensor in tensors:
        if tensor.dtype in _FLOAT_BITS:
            int_dtype, exponent, magnitude = _FLOAT_BITS[tensor.dtype]
            bits = tensor.view(int_dtype)
            subnormal = ((bits & exponent) == 0) & ((bits & magnitude) != 0)
            flushed += int(subnormal.sum())
            bits.masked_fill_(subnormal, 0)
    return flushed


def count_parameters(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
