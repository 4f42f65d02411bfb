"""ShellNet: a small PyTorch memory policy for ShellGameTouch-lite (docs/your-policy.md), hand-weighted, no training.

Two nn.Modules, the split every IMEP memory policy has (the bank sits between them, outside the network):

    encode(rgb uint8 [B, 64, 64, 3]) -> query_key [B, 4], write_candidate [B, 4], ball_visible [B, 1]
    act(ball_visible [B, 1], pose [B, 2], memory [B, K, 4], memory_mask [B, K]) -> action [B, 2], decision_logits [B, 3]

encode: a fixed colour filter marks the ball's red pixels, a Linear layer (64 columns -> 3 thirds, weights 0/1) counts
them in the left, middle and right thirds of the frame; write_candidate = (left, middle, right, 1), the query key is a
learned-looking constant (1, 1, 1, 0), so cosine ranking puts the cue frames (ball visible) first. act: a Linear
read-out (the first three components of each memory row, masked) gives one logit per cup; the tool steps (length
<= 0.05, below the lite limit 0.06) toward cup argmax(logits) -- cup 0 when nothing usable was read -- and holds
still while the ball is still shown (the cue phase, when touches do not count).

With its memory it finds the ball cup on every seed; with every read blocked it goes to cup 0 (chance, 1/3).
The same module is hosted in Python (torch_shell_policy.py here) and exported to ONNX (examples/onnx-checkpoint/export.py).
"""

from __future__ import annotations

import torch
from torch import nn

WIDTH = 64  # the lite frame is 64 x 64
FEATURE = 4  # (left, middle, right, 1)
CUPS = ((-0.5, 0.25), (0.0, 0.25), (0.5, 0.25))  # ShellGameTouch-lite's cup centres
STEP_LEN = 0.05


class Encode(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.thirds = nn.Linear(WIDTH, 3, bias=False)
        self.query = nn.Parameter(torch.zeros(FEATURE))
        with torch.no_grad():  # hand-set weights: column c counts toward third c // (64 / 3)
            w = torch.zeros(3, WIDTH)
            edges = (0, WIDTH // 3, (2 * WIDTH) // 3, WIDTH)
            for i in range(3):
                w[i, edges[i] : edges[i + 1]] = 1.0
            self.thirds.weight.copy_(w)
            self.query.copy_(torch.tensor([1.0, 1.0, 1.0, 0.0]))

    def forward(self, rgb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = rgb.to(torch.float32)
        r, g, b = x[..., 0], x[..., 1], x[..., 2]
        red = ((r >= 200.0) & (g <= 60.0) & (b <= 60.0)).to(torch.float32)  # [B, H, W]: the ball is (230, 20, 20)
        counts = self.thirds(red.sum(dim=1))  # [B, 3]
        ones = torch.ones_like(counts[:, :1])
        write_candidate = torch.cat([counts, ones], dim=1)
        query_key = self.query.unsqueeze(0).expand_as(write_candidate)  # [B, 4]
        ball_visible = (counts.sum(dim=1, keepdim=True) > 0.0).to(torch.float32)
        return query_key, write_candidate, ball_visible


class Act(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.readout = nn.Linear(FEATURE, 3, bias=False)
        self.register_buffer("cups", torch.tensor(CUPS, dtype=torch.float32))
        with torch.no_grad():
            self.readout.weight.copy_(torch.eye(3, FEATURE))

    def forward(
        self, ball_visible: torch.Tensor, pose: torch.Tensor, memory: torch.Tensor, memory_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        logits = (self.readout(memory) * memory_mask.unsqueeze(-1)).sum(dim=1)  # [B, 3]
        target = torch.argmax(logits, dim=1, keepdim=True)  # ties (all zero: nothing read) -> cup 0
        onehot = (torch.arange(3).unsqueeze(0) == target).to(torch.float32)  # [B, 3]
        d = onehot @ self.cups - pose
        dist = torch.sqrt((d * d).sum(dim=1, keepdim=True))
        scale = torch.minimum(dist, torch.full_like(dist, STEP_LEN)) / torch.clamp(dist, min=1e-12)
        action = d * scale * (1.0 - ball_visible)
        return action, logits


class ShellNet(nn.Module):
    """Both halves, for loading and exporting together."""

    def __init__(self) -> None:
        super().__init__()
        self.encode = Encode()
        self.act = Act()
