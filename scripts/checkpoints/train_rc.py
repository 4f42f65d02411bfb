#!/usr/bin/env python3
"""Trains a RememberColor-lite checkpoint whose memory is the structured PCMB bank, and exports ONNX.

    /usr/bin/python3 scripts/checkpoints/train_rc.py --demos /tmp/imep-demos/rc3-retry --demos /tmp/imep-demos/rc5-retry \
        --out checkpoints/lite-memvla-rc --variant memvla --seed 1

Runs with Debian's python3-torch (1.13) + python3-onnx + python3-numpy on CPU (1 thread, deterministic algorithms), no
downloads, in well under a minute of training.

Architecture:
  encode(rgb uint8[B,64,64,3]) -> query_key f32[B,4], write_candidate f32[B,d], write_gate f32[B,1], encoding f32[B,e]
      x = rgb[:, ::2, ::2, :] / 255 (32x32x3 = 3072) -> relu(Linear 3072->64) -> relu(Linear 64->e) = encoding
      query_key = Linear(e->4): the state key (the record's cognitive key, perceptual key and state signature, and
                  the query's); trained to a phase code: cue frame (1,0,0,0), blank frame (1,1,0,0), candidate
                  frame (1,0,1,0) — so every cue-frame write merges into one record (cosine >= the bank's merge
                  threshold 0.9) and every later query passes the selector's state-signature gate (cosine 0.71 >= 0.45)
      write_candidate = Linear(e->d): the record's cognitiveValue (what the act graph reads back)
      write_gate = Linear(e->1): the runtime writes the step's record iff write_gate > 0 (trained: cue shown)
  act(encoding, rgb uint8[B,64,64,3], pose f32[B,2], memory f32[B,k,d], memory_mask f32[B,k])
      -> action f32[B,2], decision_logits f32[B,9]
      pooled = sum_i mask_i memory_i / max(1, sum_i mask_i)
      decision_logits = Linear_mem(pooled) (d->9, the palette; its weight is the memory weight)
      colour = PALETTE[argmax decision_logits] / 255                      (a fixed table, the task's 9 colours)
      attention = softmax_pixels(-beta * |rgb/255 - colour|^2)           (spatial soft-argmax, beta learned)
      target = sum_pixels attention * pixel centre (x, y)
      go = sigmoid(Linear(e->1)(encoding))                               (trained: candidates visible)
      action = go * 0.06 * tanh(MLP(target - pose))                      (MLP 2->32->2)

Memory semantics (as the TS runtime, src/policies/README.md, structured bank): the bank is a StructuredBank scope
per unit, kept from attempt 1 into attempt 2; each step the runtime queries (all three keys = query_key) BEFORE it
writes, and writes only when write_gate > 0. In attempt 1 the cue frames (steps 0-4) are written and merge into one
record whose cognitiveValue is the last cue frame's write_candidate; every later read returns that record. Training
therefore feeds the act graph memory = the write_candidate of a cue frame of the same episode (1 or 2 rows).

Variants:
  memvla  as above: the decision head reads the record (cross-entropy on the cue colour); in a fraction --block of
          training samples the memory is empty (mask 0) and the label is the memoryless expert's choice, so that with
          its reads blocked the policy has a defined behaviour (one fixed colour: success about 1/K).
  blind   memory inputs zeroed and Linear_mem.weight initialised to exactly zero and frozen: the decision is its
          bias alone, trained on the memoryless expert's choice (the candidate nearest the robot at step 10), so the
          outputs do not depend on the bank at all.
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
# MIKASA-Robo RememberColor COLOR_MAPPING as src/sims/lite/remember-color.ts REMEMBER_COLOR_PALETTE (checked
# against it by write-manifest.ts).
PALETTE = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [255, 0, 255], [0, 255, 255], [128, 0, 0], [255, 128, 0], [0, 128, 128]]
CUE_END = 5
CANDIDATES_FROM = 10
KEY_DIM = 4
PHASE_KEYS = [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]]


class Encode(nn.Module):
    def __init__(self, res, stride, hidden, enc, d):
        super().__init__()
        self.stride = stride
        n = (res // stride) ** 2 * 3
        self.l1 = nn.Linear(n, hidden)
        self.l2 = nn.Linear(hidden, enc)
        self.key = nn.Linear(enc, KEY_DIM)
        self.value = nn.Linear(enc, d)
        self.gate = nn.Linear(enc, 1)

    def forward(self, rgb):
        x = rgb[:, :: self.stride, :: self.stride, :].float() / 255.0
        x = x.reshape(x.shape[0], -1)
        e = F.relu(self.l2(F.relu(self.l1(x))))
        return self.key(e), self.value(e), self.gate(e), e


class Act(nn.Module):
    def __init__(self, res, enc, d):
        super().__init__()
        self.mem = nn.Linear(d, len(PALETTE))
        self.go = nn.Linear(enc, 1)
        self.h1 = nn.Linear(2, 32)
        self.h2 = nn.Linear(32, 2)
        self.log_beta = nn.Parameter(torch.tensor(float(np.log(50.0))))
        self.register_buffer('palette', torch.tensor(PALETTE, dtype=torch.float32) / 255.0)
        centres = (torch.arange(res, dtype=torch.float32) * 2 + 1) / res
        xs = (centres - 1).reshape(1, res).expand(res, res)  # column i -> x
        ys = (1 - centres).reshape(res, 1).expand(res, res)  # row j -> y
        self.register_buffer('coords', torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1))

    def decision(self, memory, mask):
        pooled = (memory * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1.0)
        return self.mem(pooled)

    def locate(self, rgb, colour):
        pix = rgb.float().reshape(rgb.shape[0], -1, 3) / 255.0
        d2 = ((pix - colour.unsqueeze(1)) ** 2).sum(-1)
        att = torch.softmax(-torch.exp(self.log_beta) * d2, dim=1)
        return att @ self.coords

    def move(self, encoding, target, pose):
        go = torch.sigmoid(self.go(encoding))
        return go * ACTION_SCALE * torch.tanh(self.h2(torch.relu(self.h1(target - pose)))), go

    def forward(self, encoding, rgb, pose, memory, memory_mask):
        logits = self.decision(memory, memory_mask)
        colour = self.palette[torch.argmax(logits, dim=1)]
        target = self.locate(rgb, colour)
        action, _ = self.move(encoding, target, pose)
        return action, logits


def load_demos(path):
    meta = json.load(open(os.path.join(path, 'meta.json')))
    raw = {}
    for name in meta['sha256']:
        b = open(os.path.join(path, name), 'rb').read()
        if hashlib.sha256(b).hexdigest() != meta['sha256'][name]:
            raise SystemExit(f'train_rc: {path}/{name}: sha256 differs from meta.json')
        raw[name] = b
    res = meta['resolution']
    frames = np.frombuffer(gzip.decompress(raw['frames.u8.gz']), dtype=np.uint8).reshape(-1, res, res, 3)
    arr = lambda n, t: np.frombuffer(raw[n], dtype=t)
    d = {
        'meta': meta,
        'frames': frames,
        'episode': arr('episode.i32', np.int32),
        'step': arr('step.i32', np.int32),
        'frame': arr('frame.i32', np.int32),
        'pose': arr('pose.f32', np.float32).reshape(-1, 2),
        'action': arr('action.f32', np.float32).reshape(-1, 2),
        'answer': arr('answer.i32', np.int32),
        'choice_nomem': arr('choice_nomem.i32', np.int32),
    }
    if (d['frame'] < 0).any():
        raise SystemExit(f'train_rc: {path}: RememberColor demos have no black frames')
    return d


def target_centre(frame, colour, res):
    m = np.all(frame == np.array(colour, dtype=np.uint8), axis=-1)
    if not m.any():
        return None
    j, i = np.nonzero(m)
    return np.array([((2 * i + 1) / res - 1).mean(), (1 - (2 * j + 1) / res).mean()], dtype=np.float32)


def build(sets):
    """Per step: frame, pose, action label, phase, target centre, answer, memoryless choice, a cue frame of the episode."""
    rgb, pose, action, phase, centre, has_centre, answer, nomem, cue = [], [], [], [], [], [], [], [], []
    for d in sets:
        res = d['meta']['resolution']
        ep, st, fr = d['episode'], d['step'], d['frame']
        cue_frames = {}
        for i in range(len(st)):
            if st[i] < CUE_END:
                cue_frames.setdefault(int(ep[i]), []).append(int(fr[i]))
        nomem_of = {}
        for i in range(len(st)):
            if st[i] == CANDIDATES_FROM:
                nomem_of[int(ep[i])] = int(d['choice_nomem'][i])
        for i in range(len(st)):
            f = d['frames'][fr[i]]
            e = int(ep[i])
            rgb.append(f)
            pose.append(d['pose'][i])
            action.append(d['action'][i])
            phase.append(0 if st[i] < CUE_END else (1 if st[i] < CANDIDATES_FROM else 2))
            c = target_centre(f, PALETTE[d['answer'][i]], res) if st[i] >= CANDIDATES_FROM else None
            centre.append(c if c is not None else np.zeros(2, np.float32))
            has_centre.append(c is not None)
            answer.append(int(d['answer'][i]))
            nomem.append(nomem_of.get(e, -1))
            cue.append([d['frames'][j] for j in cue_frames[e]])
    return {
        'rgb': torch.from_numpy(np.stack(rgb)),
        'pose': torch.from_numpy(np.stack(pose)),
        'action': torch.from_numpy(np.stack(action)),
        'phase': torch.tensor(phase),
        'centre': torch.from_numpy(np.stack(centre)),
        'has_centre': torch.tensor(has_centre),
        'answer': torch.tensor(answer),
        'nomem': torch.tensor(nomem),
        'cue': cue,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--demos', action='append', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--variant', choices=['memvla', 'blind'], required=True)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--epochs', type=int, default=10)
    ap.add_argument('--block', type=float, default=0.2)
    ap.add_argument('--batch', type=int, default=128)
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--hidden', type=int, default=64)
    ap.add_argument('--enc', type=int, default=32)
    ap.add_argument('--d', type=int, default=8)
    ap.add_argument('--k', type=int, default=4)
    ap.add_argument('--stride', type=int, default=2)
    args = ap.parse_args()
    t0 = time.time()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    sets = [load_demos(p) for p in args.demos]
    res = sets[0]['meta']['resolution']
    data = build(sets)
    n = data['rgb'].shape[0]
    enc_net = Encode(res, args.stride, args.hidden, args.enc, args.d)
    act_net = Act(res, args.enc, args.d)
    blind = args.variant == 'blind'
    if blind:
        with torch.no_grad():
            act_net.mem.weight.zero_()
        act_net.mem.weight.requires_grad_(False)
    params = [p for p in list(enc_net.parameters()) + list(act_net.parameters()) if p.requires_grad]
    opt = torch.optim.Adam(params, lr=args.lr)
    keys = torch.tensor(PHASE_KEYS)
    gen = torch.Generator().manual_seed(args.seed)
    rng = random.Random(args.seed)
    log = []
    for epoch in range(args.epochs):
        perm = torch.randperm(n, generator=gen)
        tot = {'key': 0.0, 'gate': 0.0, 'go': 0.0, 'decision': 0.0, 'locate': 0.0, 'action': 0.0}
        batches = 0
        for b in range(0, n, args.batch):
            idx = perm[b : b + args.batch]
            rgb = data['rgb'][idx]
            key, _, gate, e = enc_net(rgb)
            phase = data['phase'][idx]
            l_key = F.mse_loss(key, keys[phase])
            l_gate = F.binary_cross_entropy_with_logits(gate[:, 0], (phase == 0).float())
            # memory: the write candidate of 1 or 2 cue frames of the episode (all cue writes merge into one record)
            B = idx.shape[0]
            memory = torch.zeros(B, args.k, args.d)
            mask = torch.zeros(B, args.k)
            cue_rgb, rows = [], []
            blocked = torch.zeros(B, dtype=torch.bool)
            for r, i in enumerate(idx.tolist()):
                frames = data['cue'][i]
                blocked[r] = blind or rng.random() < args.block
                if blocked[r]:
                    continue
                m = 1 + (rng.random() < 0.25)
                for j in range(m):
                    cue_rgb.append(frames[rng.randrange(len(frames))])
                    rows.append((r, j))
            if rows:
                _, cue_value, _, _ = enc_net(torch.from_numpy(np.stack(cue_rgb)))
                ri = torch.tensor([r for r, _ in rows])
                ji = torch.tensor([j for _, j in rows])
                memory = memory.index_put((ri, ji), cue_value)
                mask = mask.index_put((ri, ji), torch.ones(len(rows)))
            logits = act_net.decision(memory, mask)
            label = torch.where(blocked, data['nomem'][idx], data['answer'][idx])
            valid = label >= 0
            l_dec = F.cross_entropy(logits[valid], label[valid]) if valid.any() else torch.zeros(())
            # where the colour is, and how to get there (teacher colour: the expert's remembered/nearest colour)
            colour = act_net.palette[data['answer'][idx]]
            target = act_net.locate(rgb, colour)
            hc = data['has_centre'][idx]
            l_loc = F.mse_loss(target[hc], data['centre'][idx][hc]) if hc.any() else torch.zeros(())
            teacher = torch.where(hc.unsqueeze(1), data['centre'][idx], target.detach())
            action, go = act_net.move(e, teacher, data['pose'][idx])
            l_go = F.binary_cross_entropy(go[:, 0].clamp(1e-6, 1 - 1e-6), (phase == 2).float())
            l_act = F.mse_loss(action / ACTION_SCALE, data['action'][idx] / ACTION_SCALE)
            loss = 10 * l_key + l_gate + l_go + l_dec + 10 * l_loc + l_act
            opt.zero_grad()
            loss.backward()
            opt.step()
            for name, v in zip(tot, [l_key, l_gate, l_go, l_dec, l_loc, l_act]):
                tot[name] += float(v)
            batches += 1
        row = {k: round(v / batches, 6) for k, v in tot.items()}
        row['epoch'] = epoch + 1
        log.append(row)
        print(f'epoch {epoch + 1}: ' + ' '.join(f'{k} {v:.5f}' for k, v in row.items() if k != 'epoch'), flush=True)

    if blind and float(act_net.mem.weight.abs().sum()) != 0.0:
        raise SystemExit('train_rc: blind memory weights are not exactly zero')

    # teacher-forced checks on the training set (closed-loop competence is measured by measure-rc.ts)
    with torch.no_grad():
        key, value, gate, e = enc_net(data['rgb'])
        phase = data['phase']
        gate_acc = float(((gate[:, 0] > 0) == (phase == 0)).float().mean())
        kn = F.normalize(key, dim=1)
        cue_k = kn[phase == 0]
        merge_min = float((cue_k @ cue_k[:200].T).min())
        gate_min = float((kn[phase != 0] @ cue_k[:200].T).min())
        go = torch.sigmoid(act_net.go(e))[:, 0]
        go_acc = float(((go > 0.5) == (phase == 2)).float().mean())
        cue_idx = phase == 0
        mem = torch.zeros(int(cue_idx.sum()), args.k, args.d)
        msk = torch.zeros(int(cue_idx.sum()), args.k)
        mem[:, 0] = value[cue_idx]
        msk[:, 0] = 1
        dec_acc = float((act_net.decision(mem, msk).argmax(1) == data['answer'][cue_idx]).float().mean())
        blocked = act_net.decision(torch.zeros(1, args.k, args.d), torch.zeros(1, args.k)).argmax(1).item()
    final = {
        'writeGateAccuracy': gate_acc,
        'cueKeyCosineMin': merge_min,
        'laterKeyToCueCosineMin': gate_min,
        'goAccuracy': go_acc,
        'decisionAccuracyFromCueRecord': dec_acc,
        'decisionWithoutMemory': blocked,
        'beta': float(torch.exp(act_net.log_beta)),
        'losses': log[-1],
    }
    print('train: ' + json.dumps({'variant': args.variant, **final}), flush=True)

    os.makedirs(args.out, exist_ok=True)
    enc_net.eval()
    act_net.eval()

    class EncodeExport(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, rgb):
            return self.m(rgb)

    torch.onnx.export(
        EncodeExport(enc_net), (torch.zeros(1, res, res, 3, dtype=torch.uint8),), os.path.join(args.out, 'encode.onnx'),
        input_names=['rgb'], output_names=['query_key', 'write_candidate', 'write_gate', 'encoding'],
        dynamic_axes={n_: {0: 'batch'} for n_ in ['rgb', 'query_key', 'write_candidate', 'write_gate', 'encoding']}, opset_version=13,
    )
    torch.onnx.export(
        act_net,
        (torch.zeros(1, args.enc), torch.zeros(1, res, res, 3, dtype=torch.uint8), torch.zeros(1, 2), torch.zeros(1, args.k, args.d), torch.zeros(1, args.k)),
        os.path.join(args.out, 'act.onnx'),
        input_names=['encoding', 'rgb', 'pose', 'memory', 'memory_mask'], output_names=['action', 'decision_logits'],
        dynamic_axes={n_: {0: 'batch'} for n_ in ['encoding', 'rgb', 'pose', 'memory', 'memory_mask', 'action', 'decision_logits']}, opset_version=13,
    )
    import onnx

    for g, variant in (('encode', args.variant), ('act', args.variant)):
        p = os.path.join(args.out, f'{g}.onnx')
        m = onnx.load(p)
        for k_, v_ in (('imep.graph', g), ('imep.variant', variant), ('imep.seed', str(args.seed))):
            e_ = m.metadata_props.add()
            e_.key, e_.value = k_, v_
        onnx.save(m, p)

    report = {
        'recipe': 'scripts/checkpoints/train_rc.py',
        'variant': args.variant,
        'hyperparameters': {'block': args.block, 'k': args.k, 'd': args.d, 'enc': args.enc, 'hidden': args.hidden, 'stride': args.stride, 'keyDim': KEY_DIM,
                            'epochs': args.epochs, 'batch': args.batch, 'lr': args.lr, 'seed': args.seed, 'phaseKeys': PHASE_KEYS, 'palette': PALETTE},
        'seeds': {'torch': args.seed, 'python': args.seed, 'numpy': args.seed},
        'demos': [{**{k_: s['meta'][k_] for k_ in ('task', 'env', 'kwargs', 'choices', 'resolution', 'seeds', 'noise', 'episodes', 'steps', 'expertSuccess')},
                   'sha256': s['meta']['sha256']} for s in sets],
        'final': final,
        'torch': torch.__version__,
    }
    with open(os.path.join(args.out, 'train-report.json'), 'w') as f:
        f.write(json.dumps(report, indent=2) + '\n')
    print(f'train_rc: wrote {args.out} in {time.time() - t0:.1f} s', flush=True)


if __name__ == '__main__':
    main()
