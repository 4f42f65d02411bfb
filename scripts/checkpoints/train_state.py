#!/usr/bin/env python3
"""Trains a learned memory policy for a REAL simulator from state observations, and exports it as an IMEP checkpoint.

    .venvs/train/bin/python scripts/checkpoints/train_state.py --task mikasa-rc3 \
        --demos /tmp/imep-demos/real/mikasa-rc3 --out checkpoints/mikasa-rc3-memvla --variant memvla --seed 1

Runs with torch 2.13.0 (CPU build; `bash scripts/checkpoints/setup-train.sh` makes .venvs/train), 1 thread,
deterministic algorithms, no downloads. Demonstrations: a LeRobot dataset v3.0 folder
(sim-bridge/imep_sim_bridge/demos, recorded by scripts/checkpoints/record-real-demos.sh).

Tasks (TASKS below): `mikasa-rc3` (MIKASA-Robo RememberColor3-VLA-v0, obs_mode state, pd_ee_delta_pos) and
`libero-drawer` (libero-mem/top-drawer-cue). The graphs, in IMEP's checkpoint format (src/policies/README.md):

  encode(<observation fields>) -> query_key f32[B,d], write_candidate f32[B,d], encoding f32[B,e]
      x = the fields flattened and concatenated, standardised by the demonstrations' mean/std (constants in the
      graph); e = relu(W2 relu(W1 x)); query_key = Wq e; write_candidate = Ww e.
  act(encoding, <observation fields>, memory f32[B,k,d], memory_mask f32[B,k]) -> action f32[B,A], decision_logits f32[B,C]
      READ BY ATTENTION over the k records the bank returned (after IMEP's read hook):
        a = Wa e;  s_j = <a, memory_j>/sqrt(d) (masked);  alpha = softmax(s) * mask;  r = sum_j alpha_j memory_j
        (r = 0 when every row is masked: blocked reads);  decision_logits = Wc r + bc;  p = softmax(decision_logits)
      mikasa-rc3: target = sum_c p_c * cubes[c, :3] (a pointer over the candidate cubes' positions, soft);
                  h = MLP([10 (target - tcp), 10 tcp, all-visible flag, e]); action = Wo h  (A = 4)
      libero-drawer: h = MLP([10 (handle - eef), standardised state, p, e]); action = Wo h   (A = 7)

The bank is IMEP's episode bank, OUTSIDE the graphs: at step t the runtime ranks the write candidates of steps
0 … t-1 of the episode by float64 cosine to query_key (ties -> earlier step), takes the top k, passes them through
the read hook, feeds them as memory, then writes write_candidate of step t (read before write; capacity >= the
episode's step limit, so it never consolidates). Training reimplements exactly that retrieval (stable sort = the
tie rule), with gradients into the retrieved values. A hard top-k gives the query key no gradient, so it is trained
by retrieval supervision: from the first non-cue step on, -log of the softmax(cosine / tau_r) mass on the writes of
the cue steps (a training-only label: the steps whose observation shows the cue).

Losses: action MSE against the expert's CLEAN action (the demonstrations' `action`; the executed one carried noise),
cross-entropy of decision_logits on the episode's fact (`imep.fact`, evaluator-only in IMEP, a label here) from the
decision step on, and the retrieval loss.

Variants: memvla — as above. blind — the memoryless twin: same architecture and data, every read blocked in
training (memory_mask = 0) and the decision head's memory weight Wc initialised to exactly zero and frozen, so its
outputs cannot depend on the bank (0 * r = 0).

Export: ONNX opset 17 (TorchScript exporter, dynamo=False), dynamic batch axis, metadata imep.graph/variant/seed/task;
then the parity check: ONNX Runtime (Python) against torch on held-out observations (validation episodes, real
retrieved memory), max |difference| <= 1e-5 on every output or the script exits 1; the inputs and torch's outputs
are written to parity.json, which test/policies/state-checkpoints-parity.test.ts replays through onnxruntime-node.
"""

import argparse
import base64
import json
import os
import random
import time

import numpy as np
import torch
import torch.nn.functional as F
from state_demos import TASKS, episodes_tensor, load_demos
from state_model import build

# The runtime's read-before-write top-k retrieval (stable sort = the bank's tie rule), shared with the lite trainer.
from train import retrieve

OPSET = 17
PARITY_TOLERANCE = 1e-5

# ---------------------------------------------------------------------------------------------------------- training


def run_episodes(enc, act, task, obs, lengths, k, blocked):
    """encode every step, retrieve as the runtime does, act: returns (action, logits, q, w, valid, memory, mask)."""
    first = next(iter(obs.values()))
    B, T, _ = first.shape
    enc_in = [obs[n].reshape(B * T, *([*s] if s else [])) for n, s in task["encode_fields"]]
    q, w, e = enc(*enc_in)
    q, w, e = q.view(B, T, -1), w.view(B, T, -1), e.view(B, T, -1)
    order, picked_valid, valid = retrieve(q, w, lengths, k)
    d = w.shape[-1]
    memory = torch.gather(w.unsqueeze(1).expand(B, T, T, d), 2, order.unsqueeze(-1).expand(B, T, k, d))
    mask = picked_valid.float()
    if blocked:
        mask = torch.zeros_like(mask)
        memory = torch.zeros_like(memory)
    act_in = [obs[n].reshape(B * T, *([*s] if s else [])) for n, s in task["act_fields"]]
    a, lg = act(e.reshape(B * T, -1), *act_in, memory.reshape(B * T, k, d), mask.reshape(B * T, k))
    return a.view(B, T, -1), lg.view(B, T, -1), q, w, valid, memory, mask


def losses(task, args, batch, enc, act, blocked):
    obs, action, cue, dec, fact, lengths = batch
    B, T = cue.shape
    a, lg, q, w, valid, _, _ = run_episodes(enc, act, task, obs, lengths, args.k, blocked)
    smask = (torch.arange(T).view(1, T) < lengths.view(B, 1)).float()
    la = (((a - action) ** 2).sum(-1) * smask).sum() / smask.sum()
    dmask = smask * dec.float()
    C = lg.shape[-1]
    ld = F.cross_entropy(lg.reshape(-1, C), fact.view(B, 1).expand(B, T).reshape(-1), reduction="none").view(B, T)
    ld = (ld * dmask).sum() / dmask.sum().clamp(min=1)
    lr = torch.tensor(0.0)
    if not blocked:
        cos = F.normalize(q, dim=-1) @ F.normalize(w, dim=-1).transpose(1, 2)
        is_cue = cue.view(B, 1, T) & valid
        later = (~cue) & smask.bool() & is_cue.any(-1)
        z = cos / args.retrieval_tau
        lr_all = torch.logsumexp(z.masked_fill(~valid, float("-inf")), -1)
        lr_cue = torch.logsumexp(z.masked_fill(~is_cue, float("-inf")), -1)
        lr = torch.where(later, lr_all - lr_cue, torch.zeros(())).sum() / later.sum().clamp(min=1)
    return la + args.decision_weight * ld + args.retrieval_weight * lr, la, ld, lr


@torch.no_grad()
def evaluate(task, args, data, enc, act):
    """Teacher-forced, on validation episodes: decision accuracy over the decision steps (with memory / blocked), the
    cue writes' share of the top-k there, action MSE."""
    obs, action, cue, dec, fact, lengths = data
    B, T = cue.shape
    smask = torch.arange(T).view(1, T) < lengths.view(B, 1)
    dm = dec & smask
    out = {}
    for label, blocked in (("memory", False), ("blocked", True)):
        a, lg, q, w, valid, _, _ = run_episodes(enc, act, task, obs, lengths, args.k, blocked)
        acc = ((lg.argmax(-1) == fact.view(B, 1)) & dm).float().sum() / dm.float().sum()
        mse = (((a - action) ** 2).sum(-1) * smask.float()).sum() / smask.float().sum()
        out[label] = {"decisionAccuracy": round(float(acc), 4), "actionMse": round(float(mse), 5)}
    order, picked_valid, _ = retrieve(q, w, lengths, args.k)
    picked_cue = torch.gather(cue.unsqueeze(1).expand(B, T, T), 2, order) & picked_valid
    share = picked_cue.float().sum(-1) / picked_valid.float().sum(-1).clamp(min=1)
    out["cueShareOfTopK"] = round(float((share * dm.float()).sum() / dm.float().sum()), 4)
    return out


# ------------------------------------------------------------------------------------------------------------ export


def export(task, args, enc, act, out):
    enc.eval()
    act.eval()
    enc_names = [n for n, _ in task["encode_fields"]]
    act_names = [n for n, _ in task["act_fields"]]
    enc_dummy = tuple(torch.zeros(2, *s) for _, s in task["encode_fields"])
    torch.onnx.export(
        enc,
        enc_dummy,
        os.path.join(out, "encode.onnx"),
        input_names=enc_names,
        output_names=["query_key", "write_candidate", "encoding"],
        opset_version=OPSET,
        dynamo=False,
        dynamic_axes={n: {0: "batch"} for n in enc_names + ["query_key", "write_candidate", "encoding"]},
    )
    act_dummy = (
        torch.zeros(2, args.enc),
        *(torch.zeros(2, *s) for _, s in task["act_fields"]),
        torch.zeros(2, args.k, args.d),
        torch.zeros(2, args.k),
    )
    act_inputs = ["encoding", *act_names, "memory", "memory_mask"]
    torch.onnx.export(
        act,
        act_dummy,
        os.path.join(out, "act.onnx"),
        input_names=act_inputs,
        output_names=["action", "decision_logits"],
        opset_version=OPSET,
        dynamo=False,
        dynamic_axes={n: {0: "batch"} for n in act_inputs + ["action", "decision_logits"]},
    )
    import onnx

    for name in ("encode.onnx", "act.onnx"):
        path = os.path.join(out, name)
        model = onnx.load(path)
        onnx.checker.check_model(model)
        del model.metadata_props[:]
        for key, value in (("imep.graph", name[:-5]), ("imep.variant", args.variant), ("imep.seed", str(args.seed)), ("imep.task", args.task)):
            p = model.metadata_props.add()
            p.key, p.value = key, value
        onnx.save(model, path)


def b64(a):
    return base64.b64encode(np.ascontiguousarray(a, dtype=np.float32).tobytes()).decode("ascii")


@torch.no_grad()
def parity(task, args, enc, act, val, out, rows):
    """ONNX Runtime (Python) against torch on held-out observations; writes parity.json; returns the max |diff|."""
    import onnxruntime as ort

    obs, _, cue, _, _, lengths = val
    B, T = cue.shape
    _, _, q, w, valid, memory, mask = run_episodes(enc, act, task, obs, lengths, args.k, False)
    step_ok = (torch.arange(T).view(1, T) < lengths.view(B, 1)).reshape(-1)
    idx = torch.nonzero(step_ok).view(-1)
    g = torch.Generator().manual_seed(args.seed + 7)
    idx = idx[torch.randperm(len(idx), generator=g)[:rows]].sort().values
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    enc_sess = ort.InferenceSession(os.path.join(out, "encode.onnx"), so, providers=["CPUExecutionProvider"])
    act_sess = ort.InferenceSession(os.path.join(out, "act.onnx"), so, providers=["CPUExecutionProvider"])
    feeds_enc = {n: obs[n].reshape(B * T, *s)[idx].numpy() for n, s in task["encode_fields"]}
    torch_enc = enc(*(torch.from_numpy(feeds_enc[n]) for n, _ in task["encode_fields"]))
    onnx_enc = enc_sess.run(["query_key", "write_candidate", "encoding"], feeds_enc)
    feeds_act = {
        "encoding": torch_enc[2].numpy(),
        **{n: obs[n].reshape(B * T, *s)[idx].numpy() for n, s in task["act_fields"]},
        "memory": memory.reshape(B * T, args.k, -1)[idx].float().numpy(),
        "memory_mask": mask.reshape(B * T, args.k)[idx].numpy(),
    }
    torch_act = act(*(torch.from_numpy(feeds_act[n]) for n in feeds_act))
    onnx_act = act_sess.run(["action", "decision_logits"], feeds_act)
    diffs = {}
    for name, t_out, o_out in zip(["query_key", "write_candidate", "encoding"], torch_enc, onnx_enc):
        diffs[name] = float(np.abs(t_out.numpy() - o_out).max())
    for name, t_out, o_out in zip(["action", "decision_logits"], torch_act, onnx_act):
        diffs[name] = float(np.abs(t_out.numpy() - o_out).max())
    doc = {
        "what": "held-out observations (validation episodes, memory as retrieved by the runtime rule) and what torch computed; "
        "float32 little-endian, base64; ONNX Runtime must agree within tolerance",
        "tolerance": PARITY_TOLERANCE,
        "rows": int(len(idx)),
        "torch": torch.__version__,
        "onnxruntimePython": ort.__version__,
        "maxAbsDiffOnnxruntimePython": diffs,
        "encode": {
            "inputs": {n: {"shape": list(v.shape), "data": b64(v)} for n, v in feeds_enc.items()},
            "outputs": {n: {"shape": list(t.shape), "data": b64(t.numpy())} for n, t in zip(["query_key", "write_candidate", "encoding"], torch_enc)},
        },
        "act": {
            "inputs": {n: {"shape": list(v.shape), "data": b64(v)} for n, v in feeds_act.items()},
            "outputs": {n: {"shape": list(t.shape), "data": b64(t.numpy())} for n, t in zip(["action", "decision_logits"], torch_act)},
        },
    }
    with open(os.path.join(out, "parity.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", choices=sorted(TASKS), required=True)
    ap.add_argument("--demos", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--variant", choices=["memvla", "blind"], required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=None, help="default: the task's (TASKS)")
    ap.add_argument("--batch", type=int, default=16, help="episodes per batch")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--d", type=int, default=8)
    ap.add_argument("--enc", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--retrieval-weight", type=float, default=0.3)
    ap.add_argument("--retrieval-tau", type=float, default=0.2)
    ap.add_argument("--decision-weight", type=float, default=0.3)
    ap.add_argument("--validation", type=float, default=0.1, help="share of episodes held out (the last ones)")
    ap.add_argument("--parity-rows", type=int, default=48)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    task = TASKS[args.task]
    if args.epochs is None:
        args.epochs = task["epochs"]

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(args.seed + 1000)

    t0 = time.time()
    info, raw, digests = load_demos(args.demos, task)
    enc, act = build(args.task, task, args, raw)
    obs, action, cue, dec, fact, lengths = episodes_tensor(args.task, task, raw)
    E = len(lengths)
    n_val = max(1, int(round(E * args.validation)))
    n_train = E - n_val
    sl = slice(n_train, E)
    val = ({n: v[sl] for n, v in obs.items()}, action[sl], cue[sl], dec[sl], fact[sl], lengths[sl])
    params = [p for p in list(enc.parameters()) + list(act.parameters()) if p.requires_grad]
    opt = torch.optim.Adam(params, lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, args.epochs))
    blocked = args.variant == "blind"
    history = []
    for epoch in range(args.epochs):
        enc.train()
        act.train()
        perm = torch.randperm(n_train, generator=gen)
        sums = np.zeros(4)
        nb = 0
        for i in range(0, n_train, args.batch):
            idx = perm[i : i + args.batch]
            T = int(lengths[idx].max())
            batch = ({n: v[idx, :T] for n, v in obs.items()}, action[idx, :T], cue[idx, :T], dec[idx, :T], fact[idx], lengths[idx])
            total, la, ld, lr = losses(task, args, batch, enc, act, blocked)
            opt.zero_grad()
            total.backward()
            opt.step()
            sums += [float(total), float(la), float(ld), float(lr)]
            nb += 1
        sched.step()
        if epoch % 10 == 0 or epoch == args.epochs - 1:
            enc.eval()
            act.eval()
            row = {
                "epoch": epoch,
                "loss": round(sums[0] / nb, 5),
                "actionLoss": round(sums[1] / nb, 5),
                "decisionLoss": round(sums[2] / nb, 5),
                "retrievalLoss": round(sums[3] / nb, 5),
                "validation": evaluate(task, args, val, enc, act),
            }
            history.append(row)
            print(json.dumps(row), flush=True)
    os.makedirs(args.out, exist_ok=True)
    export(task, args, enc, act, args.out)
    diffs = parity(task, args, enc, act, val, args.out, args.parity_rows)
    worst = max(diffs.values())
    print(f"parity: ONNX Runtime (Python) vs torch, max |diff| per output {json.dumps(diffs)}")
    if not worst <= PARITY_TOLERANCE:
        raise SystemExit(f"parity: max |diff| {worst:.3g} exceeds {PARITY_TOLERANCE}")
    report = {
        "recipe": "scripts/checkpoints/train_state.py",
        "task": args.task,
        "variant": args.variant,
        "contract": {
            "encodeFields": task["encode_fields"],
            "actFields": task["act_fields"],
            "actionDim": task["action_dim"],
            "choices": task["choices"],
            "capacity": task["capacity"],
            "opset": OPSET,
        },
        "hyperparameters": {k: v for k, v in vars(args).items() if k not in ("demos", "out")},
        "seeds": {"torch": args.seed, "numpy": args.seed, "python": args.seed, "batchOrder": args.seed + 1000},
        "demos": {
            "format": "LeRobot dataset v3.0",
            "env": task["env"],
            "kwargs": task["kwargs"],
            "episodes": int(E),
            "frames": int(lengths.sum()),
            "info": {k: info.get(k) for k in ("codebase_version", "fps", "total_episodes", "total_frames")},
            "sha256": digests,
            "imep": info.get("imep"),
        },
        "trainEpisodes": int(n_train),
        "validationEpisodes": int(n_val),
        "final": history[-1] if history else None,
        "parity": {"tolerance": PARITY_TOLERANCE, "maxAbsDiff": diffs},
        "torch": torch.__version__,
        "numpy": np.__version__,
        "threads": args.threads,
    }
    with open(os.path.join(args.out, "train-report.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    print(f"train_state: {args.task} {args.variant} done in {time.time() - t0:.1f} s -> {args.out}")


if __name__ == "__main__":
    main()
