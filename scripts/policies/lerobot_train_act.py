"""Recipe: a tiny LeRobot ACT policy for ShellGameTouch-lite, trained locally on scripted demonstrations (no hub).

    .venvs/lerobot/bin/python scripts/policies/lerobot_train_act.py [OUT_DIR]   # default checkpoints/lerobot-act-shellgame

(.venvs/lerobot: scripts/policies/lerobot.sh.) What it writes is a LeRobot policy folder — `policy.save_pretrained`
(config.json, model.safetensors) and `preprocessor/postprocessor.save_pretrained` (the normalisation with these
demonstrations' statistics) — plus IMEP's imep_observation.json (which IMEP field feeds which input feature); served
by sim-bridge/imep_sim_bridge/lerobot_policy.py. Same seed, same torch build → the same bytes.

The demonstrations are ShellGameTouch-lite's state dynamics (src/sims/lite/shell-game.ts, lite-env.ts): the tool starts
at (0, -0.7), an action (dx, dy) is length-clipped to 0.06 and the tool clamped to [-0.95, 0.95]^2; the expert holds
still for the 5 cue steps, then steps 0.05 toward the ball cup (x = -0.5 | 0 | 0.5, y = 0.25) until it touches
(within 0.08), ball cups drawn uniformly. The policy sees only the tool position (`toolPosition` → observation.state and
observation.environment_state: ACT needs an image or an environment state, and reads observation.state's device), never
the frame, so it cannot know the ball cup: it is a memory-blind policy by construction, and what it learns from
three equally likely targets under ACT's L1 loss is the middle one (success ≈ 1/3 over seeded ball cups).
ACT: no VAE, no vision backbone (so no torchvision weights), dim_model 32, chunk_size 10, n_action_steps 5.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "sim-bridge"))

from imep_sim_bridge.lerobot_policy import MAPPING_FILE, import_lerobot  # noqa: E402

SEED = 0
HOME = np.array([0.0, -0.7])
CUP_X = (-0.5, 0.0, 0.5)
CUP_Y = 0.25
CUE_STEPS = 5
STEP_LEN = 0.05
MAX_STEP = 0.06
TOUCH = 0.08
MAX_STEPS = 90
CHUNK = 10
N_ACTION_STEPS = 5
EPISODES_PER_CUP = 20
TRAIN_STEPS = 1500
BATCH = 64


def step(tool: np.ndarray, action: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(action))
    if n > MAX_STEP:
        action = action * (MAX_STEP / n)
    return np.clip(tool + action, -0.95, 0.95)


def demonstration(cup: int, jitter: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(states [T, 2], actions [T, 2]) of one expert episode toward `cup`, from home + jitter."""
    target = np.array([CUP_X[cup], CUP_Y])
    tool = HOME + jitter
    states, actions = [], []
    for t in range(MAX_STEPS):
        a = np.zeros(2)
        if t >= CUE_STEPS:
            d = target - tool
            dist = float(np.linalg.norm(d))
            a = d * (min(STEP_LEN, dist) / dist) if dist > 0 else a
        states.append(tool.copy())
        actions.append(a)
        tool = step(tool, a)
        if t >= CUE_STEPS and float(np.linalg.norm(tool - target)) <= TOUCH:
            break
    return np.array(states, np.float32), np.array(actions, np.float32)


def samples(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every frame of every demonstration: state [N, 2], action chunk [N, CHUNK, 2], is_pad [N, CHUNK]."""
    xs, ys, pads = [], [], []
    for cup in range(3):
        for e in range(EPISODES_PER_CUP):
            jitter = np.zeros(2) if e == 0 else rng.uniform(-0.05, 0.05, 2)
            states, actions = demonstration(cup, jitter)
            T = len(states)
            for t in range(T):
                chunk = np.zeros((CHUNK, 2), np.float32)
                pad = np.ones(CHUNK, bool)
                n = min(CHUNK, T - t)
                chunk[:n], pad[:n] = actions[t : t + n], False
                xs.append(states[t])
                ys.append(chunk)
                pads.append(pad)
    return np.array(xs), np.array(ys), np.array(pads)


def stats(x: np.ndarray) -> dict[str, list[float]]:
    flat = x.reshape(-1, x.shape[-1]).astype(np.float64)
    return {
        "mean": flat.mean(0).tolist(),
        "std": np.maximum(flat.std(0), 1e-3).tolist(),
        "min": flat.min(0).tolist(),
        "max": flat.max(0).tolist(),
    }


def main(out: Path) -> None:
    factory = import_lerobot()
    import torch
    from lerobot.configs.types import FeatureType, NormalizationMode, PolicyFeature
    from lerobot.policies.act.configuration_act import ACTConfig
    from lerobot.policies.act.modeling_act import ACTPolicy

    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(SEED)
    xs, ys, pads = samples(rng)
    cfg = ACTConfig(
        input_features={
            "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(2,)),
            "observation.environment_state": PolicyFeature(type=FeatureType.ENV, shape=(2,)),
        },
        output_features={"action": PolicyFeature(type=FeatureType.ACTION, shape=(2,))},
        normalization_mapping={
            "STATE": NormalizationMode.MEAN_STD,
            "ENV": NormalizationMode.MEAN_STD,
            "ACTION": NormalizationMode.MEAN_STD,
        },
        chunk_size=CHUNK,
        n_action_steps=N_ACTION_STEPS,
        dim_model=32,
        n_heads=2,
        dim_feedforward=64,
        n_encoder_layers=1,
        n_decoder_layers=1,
        use_vae=False,
        dropout=0.0,
        pretrained_backbone_weights=None,
        device="cpu",
        push_to_hub=False,
        optimizer_lr=1e-3,
    )
    dataset_stats = {
        "observation.state": stats(xs),
        "observation.environment_state": stats(xs),
        "action": stats(ys),
    }
    policy = ACTPolicy(cfg)
    pre, post = factory.make_pre_post_processors(cfg, dataset_stats=dataset_stats)
    opt = torch.optim.AdamW(policy.parameters(), lr=cfg.optimizer_lr, weight_decay=cfg.optimizer_weight_decay)
    policy.train()
    n = len(xs)
    loss = float("nan")
    for it in range(TRAIN_STEPS):
        idx = rng.integers(0, n, BATCH)
        state = torch.from_numpy(xs[idx])
        batch = pre(
            {
                "observation.state": state,
                "observation.environment_state": state.clone(),
                "action": torch.from_numpy(ys[idx]),
                "action_is_pad": torch.from_numpy(pads[idx]),
            }
        )
        out_loss, _ = policy.forward(batch)
        opt.zero_grad()
        out_loss.backward()
        opt.step()
        loss = float(out_loss.detach())
        if it % 300 == 0 or it == TRAIN_STEPS - 1:
            print(f"step {it}: l1 {loss:.4f}", file=sys.stderr)
    policy.eval()
    out.mkdir(parents=True, exist_ok=True)
    policy.save_pretrained(out)
    pre.save_pretrained(out)
    post.save_pretrained(out)
    mapping = {"observation": {"observation.state": "toolPosition", "observation.environment_state": "toolPosition"}}
    (out / MAPPING_FILE).write_text(json.dumps(mapping, indent=2) + "\n", encoding="utf-8")
    for p in out.iterdir():
        p.chmod(0o644)  # safetensors writes 0600; a sandboxed policy host runs as another user
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"wrote {out} ({size} bytes, {len(xs)} frames, final l1 {loss:.4f})", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "checkpoints" / "lerobot-act-shellgame")
