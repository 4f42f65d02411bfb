"""The networks of the real-simulator checkpoints (docs/learned-policies.md): encode (observation fields -> query key,
write candidate, encoding) and act (attention read over the bank's records -> decision logits -> action)."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encode(nn.Module):
    def __init__(self, fields, mean, std, hidden, enc, d):
        super().__init__()
        self.fields = fields
        self.register_buffer("mean", torch.from_numpy(mean))
        self.register_buffer("inv_std", torch.from_numpy(1.0 / std))
        self.fc1 = nn.Linear(len(mean), hidden)
        self.fc2 = nn.Linear(hidden, enc)
        self.q = nn.Linear(enc, d)
        self.w = nn.Linear(enc, d)

    def forward(self, *xs):
        B = xs[0].shape[0]
        x = torch.cat([v.reshape(B, -1) for v in xs], -1)
        x = (x - self.mean) * self.inv_std
        e = F.relu(self.fc2(F.relu(self.fc1(x))))
        return self.q(e), self.w(e), e


class Attend(nn.Module):
    """The decision head's read: attention over the k records the bank returned, masked; zero when all are masked."""

    def __init__(self, enc, d, choices):
        super().__init__()
        self.a = nn.Linear(enc, d)
        self.head = nn.Linear(d, choices)
        self.scale = 1.0 / float(np.sqrt(d))

    def forward(self, e, memory, mask):
        a = self.a(e)
        s = (memory * a.unsqueeze(1)).sum(-1) * self.scale
        s = s + (mask - 1.0) * 1e9
        alpha = torch.softmax(s, -1) * mask
        r = (alpha.unsqueeze(-1) * memory).sum(1)
        return self.head(r)


class ActRememberColor(nn.Module):
    def __init__(self, enc, d, hidden, choices, action_dim):
        super().__init__()
        self.read = Attend(enc, d, choices)
        self.fc1 = nn.Linear(3 + 3 + 1 + enc, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, action_dim)

    def forward(self, encoding, joints, cubes, memory, memory_mask):
        logits = self.read(encoding, memory, memory_mask)
        p = torch.softmax(logits, -1)
        target = (p.unsqueeze(-1) * cubes[:, :, :3]).sum(1)
        tcp = joints[:, :3]
        all_visible = cubes[:, :, 3].min(-1, keepdim=True).values
        h = F.relu(self.fc1(torch.cat([(target - tcp) * 10.0, tcp * 10.0, all_visible, encoding], -1)))
        h = F.relu(self.fc2(h))
        return self.out(h), logits


class ActDrawer(nn.Module):
    def __init__(self, enc, d, hidden, choices, action_dim, state_mean, state_std):
        super().__init__()
        self.read = Attend(enc, d, choices)
        self.register_buffer("state_mean", torch.from_numpy(state_mean))
        self.register_buffer("state_inv_std", torch.from_numpy(1.0 / state_std))
        self.fc1 = nn.Linear(3 + 8 + choices + enc, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, action_dim)

    def forward(self, encoding, state, handle, memory, memory_mask):
        logits = self.read(encoding, memory, memory_mask)
        p = torch.softmax(logits, -1)
        rel = (handle - state[:, :3]) * 10.0
        s = (state - self.state_mean) * self.state_inv_std
        h = F.relu(self.fc1(torch.cat([rel, s, p, encoding], -1)))
        h = F.relu(self.fc2(h))
        return self.out(h), logits


def build(task_name, task, args, data):
    enc_x = np.concatenate([data[n].reshape(len(data[n]), -1) for n, _ in task["encode_fields"]], -1)
    mean = enc_x.mean(0).astype(np.float32)
    std = np.maximum(enc_x.std(0), 1e-3).astype(np.float32)
    enc = Encode(task["encode_fields"], mean, std, args.hidden, args.enc, args.d)
    if task_name == "mikasa-rc3":
        act = ActRememberColor(args.enc, args.d, args.hidden, task["choices"], task["action_dim"])
    else:
        st = data["state"].reshape(-1, 8)
        act = ActDrawer(
            args.enc,
            args.d,
            args.hidden,
            task["choices"],
            task["action_dim"],
            st.mean(0).astype(np.float32),
            np.maximum(st.std(0), 1e-3).astype(np.float32),
        )
    if args.variant == "blind":
        nn.init.zeros_(act.read.head.weight)
        act.read.head.weight.requires_grad_(False)
    return enc, act
