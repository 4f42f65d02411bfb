#!/usr/bin/env python3
"""Trains a lite checkpoint (encode + act graphs) on a demonstration set and exports ONNX.

    /usr/bin/python3 scripts/checkpoints/train.py --demos /tmp/imep-demos/shell --out checkpoints/lite-memvla \
        --variant memvla --seed 1

Runs with Debian's python3-torch (1.13) + python3-onnx + python3-numpy on CPU (1 thread, deterministic algorithms;
two runs on one machine give byte-identical ONNX files), no downloads.

Architecture (sizes are flags; defaults below):
  encode(rgb uint8[B,64,64,3]) -> query_key f32[B,d], write_candidate f32[B,d], encoding f32[B,e]
      x = rgb[:, ::4, ::4, :] / 255 (subsampling to 16x16x3 = 768) -> relu(Linear 768->64)
          -> relu(Linear 64->e) = encoding
      query_key = Linear(e->d)(encoding), write_candidate = Linear(e->d)(encoding)
  act(encoding f32[B,e], pose f32[B,2], memory f32[B,k,d], memory_mask f32[B,k]) -> action f32[B,2], decision_logits f32[B,C]
      pooled = sum_i mask_i * memory_i / max(1, sum_i mask_i)
      h = relu(Linear([encoding, pose]) + Linear_nobias(pooled)); h = relu(Linear h); action = 0.06 * Linear(h); logits = Linear(h)

Memory semantics (the SAME as the TS runtime, src/policies/README.md): an episode-local bank (EpisodeBank) whose
capacity is at least the episode length, so it never consolidates; at step t the policy READS BEFORE it WRITES:
the query_key of step t ranks the write candidates of steps 0..t-1 by cosine similarity (float64, ties -> earlier
step), the top k (fewer while t < k; mask 0 for empty slots) are the memory; then write_candidate of step t is
written. Training computes exactly this retrieval (stable sort = the bank's tie rule) with gradients flowing into
the retrieved values. A hard top-k passes no gradient to the query key, so the key is trained by two auxiliary
losses: (1) retrieval supervision — from the end of the cue phase on, -log of the softmax(cosine / tau_r) mass on
the writes of the cue steps (a training-only label: which steps showed the fact); without it the optimiser finds
a shortcut in which WHICH records are selected (e.g. the blank-frame writes for one answer) encodes the answer, so
that substituting the records' content would not reach the decision; (2) a soft read (softmax of cosine / tau over
all past writes, fed to the same act graph as a single memory slot).

Variants:
  memvla  memory as above; in a fraction --block of training episodes every read is blocked (mask 0) and those
          episodes are labelled by the memoryless expert (make-demos.ts: the object nearest the robot's own pose),
          so the policy has a defined behaviour without memory (chance: 1/3).
  blind   memory inputs zeroed in every training episode (all labelled by the memoryless expert) and the memory
          weights initialised to exactly zero; with zero inputs they get zero gradient and stay exactly zero, so
          the outputs do not depend on the bank at all.

Labels: an episode with working memory imitates the memory expert, an episode without memory the memoryless
expert — each learner imitates the expert that has the information it has. Decision logits are trained with
cross-entropy on the object the expert heads for (ignored while it has none).
"""
import argparse
import gzip
import hashlib
import json
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ACTION_SCALE = 0.06


class Encode(nn.Module):
    def __init__(self, res, stride, hidden, enc, d):
        super().__init__()
        self.stride = stride
        self.fc1 = nn.Linear(3 * (res // stride) ** 2, hidden)
        self.fc2 = nn.Linear(hidden, enc)
        self.q = nn.Linear(enc, d)
        self.w = nn.Linear(enc, d)

    def pool_rgb(self, rgb):
        # Downsampling by taking the first pixel of every stride x stride block (64x64 -> 16x16 at pixel rows/columns
        # 0, 4, ..., 60): a strided Slice, so the graph touches 768 of the 12288 bytes (an average pool costs ~5x
        # more per frame in ONNX Runtime). The lite scenes are drawn so that this grid hits every object: the cups
        # (and the ball under them) are centred on pixel columns 16/32/48 and row 24, RememberColor squares are
        # >= 4.5 px wide. (The tool, 3 px wide, can fall between samples; its position is the pose input.)
        s = self.stride
        x = rgb[:, ::s, ::s, :].to(torch.float32) * (1.0 / 255.0)
        return x.flatten(1)

    def features(self, pooled):
        e = F.relu(self.fc2(F.relu(self.fc1(pooled))))
        return self.q(e), self.w(e), e

    def forward(self, rgb):
        return self.features(self.pool_rgb(rgb))


class Act(nn.Module):
    def __init__(self, enc, d, hidden, choices):
        super().__init__()
        self.fe = nn.Linear(enc + 2, hidden)
        self.fm = nn.Linear(d, hidden, bias=False)
        self.fc2 = nn.Linear(hidden, hidden)
        self.action = nn.Linear(hidden, 2)
        self.logits = nn.Linear(hidden, choices)

    def forward(self, encoding, pose, memory, memory_mask):
        m = (memory * memory_mask.unsqueeze(-1)).sum(-2) / memory_mask.sum(-1, keepdim=True).clamp(min=1.0)
        h = F.relu(self.fe(torch.cat([encoding, pose], -1)) + self.fm(m))
        h = F.relu(self.fc2(h))
        return self.action(h) * ACTION_SCALE, self.logits(h)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        h.update(f.read())
    return h.hexdigest()


def load_demos(path):
    meta = json.load(open(os.path.join(path, 'meta.json')))
    for name, digest in meta['sha256'].items():
        if sha256_file(os.path.join(path, name)) != digest:
            raise SystemExit(f'{path}/{name}: sha256 differs from meta.json (regenerate the demos)')
    res = meta['resolution']
    with gzip.open(os.path.join(path, 'frames.u8.gz'), 'rb') as f:
        frames = np.frombuffer(f.read(), dtype=np.uint8).reshape(-1, res, res, 3)
    arr = lambda n, t: np.fromfile(os.path.join(path, n), dtype=t)
    return meta, frames, {
        'episode': arr('episode.i32', '<i4'), 'step': arr('step.i32', '<i4'), 'frame': arr('frame.i32', '<i4'),
        'pose': arr('pose.f32', '<f4').reshape(-1, 2), 'action': arr('action.f32', '<f4').reshape(-1, 2),
        'answer': arr('answer.i32', '<i4'), 'choice': arr('choice.i32', '<i4'),
        'action_nomem': arr('action_nomem.f32', '<f4').reshape(-1, 2), 'choice_nomem': arr('choice_nomem.i32', '<i4'),
    }


def episodes_tensor(enc, frames, cols):
    """Pads episodes to [E, T, ...]; frames go through the encoder's own (fixed) subsampling. Returns (pooled, pose,
    labels with memory (action, choice), labels without memory (action, choice), answer, lengths)."""
    with torch.no_grad():
        pooled_frames = torch.cat([enc.pool_rgb(torch.from_numpy(frames[i:i + 512].copy())) for i in range(0, len(frames), 512)])
    dim = pooled_frames.shape[1]
    ep = cols['episode']
    E = int(ep.max()) + 1
    lengths = np.bincount(ep, minlength=E)
    T = int(lengths.max())
    pooled = torch.zeros(E, T, dim)
    pose = torch.zeros(E, T, 2)
    action = torch.zeros(E, T, 2)
    action_nomem = torch.zeros(E, T, 2)
    choice = torch.full((E, T), -1, dtype=torch.long)
    choice_nomem = torch.full((E, T), -1, dtype=torch.long)
    answer = torch.zeros(E, dtype=torch.long)
    st = cols['step']
    fr = torch.from_numpy(cols['frame'].astype(np.int64))
    rows = torch.from_numpy(ep.astype(np.int64))
    steps = torch.from_numpy(st.astype(np.int64))
    nonblack = fr >= 0
    pooled[rows[nonblack], steps[nonblack]] = pooled_frames[fr[nonblack]]
    pose[rows, steps] = torch.from_numpy(cols['pose'])
    action[rows, steps] = torch.from_numpy(cols['action'])
    action_nomem[rows, steps] = torch.from_numpy(cols['action_nomem'])
    choice[rows, steps] = torch.from_numpy(cols['choice'].astype(np.int64))
    choice_nomem[rows, steps] = torch.from_numpy(cols['choice_nomem'].astype(np.int64))
    answer[rows] = torch.from_numpy(cols['answer'].astype(np.int64))
    return pooled, pose, action, choice, action_nomem, choice_nomem, answer, torch.from_numpy(lengths.astype(np.int64))


def retrieve(q, w, lengths, k):
    """The runtime's read-before-write top-k: returns picked indices [B,T,k] and their validity mask."""
    B, T, _ = q.shape
    with torch.no_grad():
        qu = F.normalize(q.double(), dim=-1)
        wu = F.normalize(w.double(), dim=-1)
        cos = qu @ wu.transpose(1, 2)  # [B, T(query), T(entry)]
        t = torch.arange(T)
        valid = (t.view(1, 1, T) < t.view(1, T, 1)) & (t.view(1, 1, T) < lengths.view(B, 1, 1))
        cos = cos.masked_fill(~valid, float('-inf'))
        order = torch.sort(cos, dim=-1, descending=True, stable=True).indices[..., :k]
        picked_valid = torch.gather(valid, -1, order)
    return order, picked_valid, valid


def step_mask(lengths, T):
    return torch.arange(T).view(1, T) < lengths.view(-1, 1)


def losses(act_out, action, choice, smask):
    a, lg = act_out
    B, T, C = lg.shape
    la = (((a - action) / ACTION_SCALE) ** 2).sum(-1)
    ld = F.cross_entropy(lg.reshape(-1, C), choice.reshape(-1), ignore_index=-1, reduction='none').view(B, T)
    n = smask.sum().clamp(min=1)
    nd = (smask * (choice >= 0).float()).sum().clamp(min=1)
    return (la * smask).sum() / n, (ld * smask).sum() / nd


def forward_batch(enc, act, batch, args, train, gen):
    pooled, pose, action, choice, action_nomem, choice_nomem, answer, lengths = batch
    B, T, _ = pooled.shape
    q, w, e = enc.features(pooled.reshape(B * T, -1))
    q, w, e = q.view(B, T, -1), w.view(B, T, -1), e.view(B, T, -1)
    order, picked_valid, valid = retrieve(q, w, lengths, args.k)
    d = w.shape[-1]
    memory = torch.gather(w.unsqueeze(1).expand(B, T, T, d), 2, order.unsqueeze(-1).expand(B, T, args.k, d))
    mask = picked_valid.float()
    if args.variant == 'blind':
        blocked = torch.ones(B, dtype=torch.bool)
        memory = torch.zeros_like(memory)
    elif train and args.block > 0:
        blocked = torch.rand(B, generator=gen) < args.block
    else:
        blocked = torch.zeros(B, dtype=torch.bool)
    mask = mask.masked_fill(blocked.view(B, 1, 1), 0.0)
    # Episodes without memory are labelled by the memoryless expert (same observations, no memory).
    action = torch.where(blocked.view(B, 1, 1), action_nomem, action)
    choice = torch.where(blocked.view(B, 1), choice_nomem, choice)
    smask = step_mask(lengths, T).float()
    la, ld = losses(act(e, pose, memory, mask), action, choice, smask)
    total = la + args.decision_weight * ld
    aux = torch.tensor(0.0)
    if args.variant == 'memvla' and train:
        cos = F.normalize(q, dim=-1) @ F.normalize(w, dim=-1).transpose(1, 2)
        # Retrieval supervision: from the end of the cue phase on, the query should rank the cue-phase writes
        # (steps < cue_steps) above every other write: -log of the softmax mass (cos / tau_r) on them.
        t_idx = torch.arange(T)
        is_cue = (t_idx < args.cue_steps).view(1, 1, T) & valid
        later = (t_idx >= args.cue_steps).view(1, T) & step_mask(lengths, T) & (~blocked).view(B, 1)
        lr_all = torch.logsumexp((cos / args.retrieval_tau).masked_fill(~valid, float('-inf')), -1)
        lr_cue = torch.logsumexp((cos / args.retrieval_tau).masked_fill(~is_cue, float('-inf')), -1)
        retrieval = torch.where(later, lr_all - lr_cue, torch.zeros(())).sum() / later.sum().clamp(min=1)
        total = total + args.retrieval_weight * retrieval
        logits = (cos / args.tau_now).masked_fill(~valid, float('-inf'))
        has = valid.any(-1)
        att = torch.softmax(logits.masked_fill(~has.unsqueeze(-1), 0.0), -1) * has.unsqueeze(-1)
        soft = att @ w  # [B, T, d]
        soft_mem = torch.zeros(B, T, args.k, d)
        soft_mem[:, :, 0] = soft
        soft_mask = torch.zeros(B, T, args.k)
        soft_mask[:, :, 0] = has.float()
        keep = (~blocked).float().view(B, 1) * smask
        la2, ld2 = losses(act(e, pose, soft_mem, soft_mask), action, choice, keep)
        aux = la2 + args.decision_weight * ld2
        total = total + args.aux_weight * aux
    return total, la, ld, aux


@torch.no_grad()
def evaluate(enc, act, data, args, from_step):
    """Teacher-forced decision accuracy (argmax logits vs the episode's answer) at step from_step (the first
    memory-only step, robot still at home, so its pose carries nothing), with memory and with reads blocked; action
    error against the memory expert and the memoryless expert respectively."""
    pooled, pose, action, choice, action_nomem, choice_nomem, answer, lengths = data
    out = {}
    for label, block in (('memory', False), ('blocked', True)):
        B, T, _ = pooled.shape
        q, w, e = enc.features(pooled.reshape(B * T, -1))
        q, w, e = q.view(B, T, -1), w.view(B, T, -1), e.view(B, T, -1)
        order, picked_valid, _ = retrieve(q, w, lengths, args.k)
        d = w.shape[-1]
        memory = torch.gather(w.unsqueeze(1).expand(B, T, T, d), 2, order.unsqueeze(-1).expand(B, T, args.k, d))
        mask = picked_valid.float() * (0.0 if block else 1.0)
        a, lg = act(e, pose, memory, mask)
        sm = step_mask(lengths, T) & (torch.arange(T).view(1, T) == from_step)
        correct = (lg.argmax(-1) == answer.view(B, 1)) & sm
        target = action_nomem if block else action
        out[label] = {'decisionAccuracy': round(float(correct.sum() / sm.sum()), 4),
                      'actionMse': round(float(((((a - target) / ACTION_SCALE) ** 2).sum(-1) * sm).sum() / sm.sum()), 5)}
    return out


class ExportEncode(nn.Module):
    def __init__(self, enc):
        super().__init__()
        self.enc = enc

    def forward(self, rgb):
        q, w, e = self.enc(rgb)
        return q, w, e


def export(enc, act, args, res, choices, out):
    enc.eval()
    act.eval()
    rgb = torch.zeros(2, res, res, 3, dtype=torch.uint8)
    torch.onnx.export(ExportEncode(enc), (rgb,), os.path.join(out, 'encode.onnx'), input_names=['rgb'],
                      output_names=['query_key', 'write_candidate', 'encoding'], opset_version=13,
                      dynamic_axes={n: {0: 'batch'} for n in ['rgb', 'query_key', 'write_candidate', 'encoding']})
    ins = (torch.zeros(2, args.enc), torch.zeros(2, 2), torch.zeros(2, args.k, args.d), torch.zeros(2, args.k))
    torch.onnx.export(act, ins, os.path.join(out, 'act.onnx'),
                      input_names=['encoding', 'pose', 'memory', 'memory_mask'],
                      output_names=['action', 'decision_logits'], opset_version=13,
                      dynamic_axes={n: {0: 'batch'} for n in ['encoding', 'pose', 'memory', 'memory_mask', 'action', 'decision_logits']})
    import onnx
    for name in ('encode.onnx', 'act.onnx'):
        path = os.path.join(out, name)
        model = onnx.load(path)
        onnx.checker.check_model(model)
        del model.metadata_props[:]
        for key, value in (('imep.graph', name[:-5]), ('imep.variant', args.variant), ('imep.seed', str(args.seed))):
            p = model.metadata_props.add()
            p.key, p.value = key, value
        onnx.save(model, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--demos', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--variant', choices=['memvla', 'blind'], required=True)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--epochs', type=int, default=100)
    ap.add_argument('--batch', type=int, default=64)
    ap.add_argument('--lr', type=float, default=3e-3)
    ap.add_argument('--k', type=int, default=4)
    ap.add_argument('--d', type=int, default=8)
    ap.add_argument('--enc', type=int, default=32)
    ap.add_argument('--hidden', type=int, default=64)
    ap.add_argument('--stride', type=int, default=4, help='image subsampling stride')
    ap.add_argument('--tau', type=float, default=0.3, help='soft-read temperature at the first epoch')
    ap.add_argument('--tau-end', type=float, default=0.03, help='soft-read temperature at the last epoch (geometric schedule)')
    ap.add_argument('--block', type=float, default=0.2)
    ap.add_argument('--retrieval-weight', type=float, default=0.3)
    ap.add_argument('--retrieval-tau', type=float, default=0.2)
    ap.add_argument('--aux-weight', type=float, default=0.5)
    ap.add_argument('--decision-weight', type=float, default=0.3)
    ap.add_argument('--memory-from', type=int, default=6, help='report teacher-forced decision accuracy at this step (first memory-only step)')
    ap.add_argument('--threads', type=int, default=1, help='torch threads (1 is fastest for these tiny batches)')
    args = ap.parse_args()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(args.seed + 1000)

    t0 = time.time()
    meta, frames, cols = load_demos(args.demos)
    res, choices = meta['resolution'], meta['choices']
    args.cue_steps = meta['cueSteps']
    enc = Encode(res, args.stride, args.hidden, args.enc, args.d)
    act = Act(args.enc, args.d, args.hidden, choices)
    if args.variant == 'blind':
        nn.init.zeros_(act.fm.weight)
    data = episodes_tensor(enc, frames, cols)
    E = data[0].shape[0]
    n_val = max(1, E // 10)
    train_idx = torch.arange(E - n_val)
    val = tuple(x[E - n_val:] for x in data)
    params = list(enc.parameters()) + list(act.parameters())
    opt = torch.optim.Adam(params, lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    history = []
    for epoch in range(args.epochs):
        enc.train()
        act.train()
        args.tau_now = args.tau * (args.tau_end / args.tau) ** (epoch / max(1, args.epochs - 1))
        perm = train_idx[torch.randperm(len(train_idx), generator=gen)]
        sums = np.zeros(4)
        nb = 0
        for i in range(0, len(perm), args.batch):
            idx = perm[i:i + args.batch]
            batch = tuple(x[idx] for x in data)
            T = int(batch[-1].max())
            batch = tuple(x[:, :T] if x.dim() >= 2 else x for x in batch)
            total, la, ld, aux = forward_batch(enc, act, batch, args, True, gen)
            opt.zero_grad()
            total.backward()
            opt.step()
            sums += [float(total), float(la), float(ld), float(aux)]
            nb += 1
        sched.step()
        if epoch % 10 == 0 or epoch == args.epochs - 1:
            enc.eval()
            act.eval()
            ev = evaluate(enc, act, val, args, args.memory_from)
            row = {'epoch': epoch, 'loss': round(sums[0] / nb, 5), 'actionLoss': round(sums[1] / nb, 5),
                   'decisionLoss': round(sums[2] / nb, 5), 'auxLoss': round(sums[3] / nb, 5), 'validation': ev}
            history.append(row)
            print(json.dumps(row), flush=True)
    os.makedirs(args.out, exist_ok=True)
    export(enc, act, args, res, choices, args.out)
    report = {
        'recipe': 'scripts/checkpoints/train.py',
        'variant': args.variant,
        'hyperparameters': {k: v for k, v in vars(args).items() if k not in ('demos', 'out', 'tau_now')},
        'seeds': {'torch': args.seed, 'numpy': args.seed, 'python': args.seed, 'batchOrderAndBlocking': args.seed + 1000},
        'demos': {k: meta[k] for k in ('format', 'version', 'task', 'env', 'kwargs', 'choices', 'cueSteps', 'resolution', 'seeds', 'noise', 'episodes', 'steps', 'sha256')},
        'trainEpisodes': int(E - n_val), 'validationEpisodes': int(n_val),
        'final': history[-1],
        'torch': torch.__version__, 'numpy': np.__version__, 'threads': args.threads,
        'seconds': round(time.time() - t0, 1),
    }
    with open(os.path.join(args.out, 'train-report.json'), 'w') as f:
        json.dump(report, f, indent=2)
        f.write('\n')
    print(f'train: {args.variant} done in {report["seconds"]} s -> {args.out}')


if __name__ == '__main__':
    main()
