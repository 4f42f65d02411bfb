"""Measures the hosted LeRobot policy (imep_sim_bridge/lerobot_policy.py) inside .venvs/lerobot; prints one JSON object.

    .venvs/lerobot/bin/python sim-bridge/tests/lerobot_probe.py CHECKPOINT_DIR

Run by test_lerobot_policy.py (system python, which has no torch/lerobot). Everything is built locally: tiny ACT and
diffusion policies initialised from a fixed torch seed, saved with save_pretrained to a temporary folder and loaded
back through the adapter (no hub); and the committed checkpoint rolled out on ShellGameTouch-lite's state dynamics.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "sim-bridge"))
sys.path.insert(0, str(ROOT / "scripts" / "policies"))

from imep_sim_bridge.lerobot_policy import MAPPING_FILE, LeRobotPolicy, import_lerobot  # noqa: E402

factory = import_lerobot()
import torch  # noqa: E402
from lerobot.configs.types import FeatureType, NormalizationMode, PolicyFeature  # noqa: E402

STATE = PolicyFeature(type=FeatureType.STATE, shape=(2,))
ENV = PolicyFeature(type=FeatureType.ENV, shape=(2,))
ACTION = PolicyFeature(type=FeatureType.ACTION, shape=(3,))  # 3 ≠ 2: the action's shape is its own
NORM = {"STATE": NormalizationMode.MEAN_STD, "ENV": NormalizationMode.MEAN_STD, "ACTION": NormalizationMode.MEAN_STD}
STATS = {
    "observation.state": {"mean": [0.0, -0.2], "std": [0.4, 0.4]},
    "observation.environment_state": {"mean": [0.0, -0.2], "std": [0.4, 0.4]},
    "action": {"mean": [0.0, 0.01, 0.5], "std": [0.02, 0.03, 2.0]},
}


def save(kind: str, seed: int, folder: Path) -> Path:
    """A tiny `kind` policy, initialised from torch seed `seed`, saved as a LeRobot folder + IMEP's mapping."""
    torch.manual_seed(seed)
    common: dict[str, Any] = {
        "input_features": {"observation.state": STATE, "observation.environment_state": ENV},
        "output_features": {"action": ACTION},
        "normalization_mapping": NORM,
        "device": "cpu",
        "push_to_hub": False,
    }
    if kind == "act":
        from lerobot.policies.act.configuration_act import ACTConfig
        from lerobot.policies.act.modeling_act import ACTPolicy

        cfg: Any = ACTConfig(
            chunk_size=6, n_action_steps=4, dim_model=16, n_heads=2, dim_feedforward=32, n_encoder_layers=1,
            n_decoder_layers=1, use_vae=False, pretrained_backbone_weights=None, **common,
        )  # fmt: skip
        policy: Any = ACTPolicy(cfg)
    else:
        from lerobot.policies.diffusion.configuration_diffusion import DiffusionConfig
        from lerobot.policies.diffusion.modeling_diffusion import DiffusionPolicy

        cfg = DiffusionConfig(
            n_obs_steps=2, horizon=8, n_action_steps=3, down_dims=(16, 32), n_groups=4, diffusion_step_embed_dim=16,
            num_train_timesteps=10, num_inference_steps=3, **common,
        )  # fmt: skip
        policy = DiffusionPolicy(cfg)
    pre, post = factory.make_pre_post_processors(cfg, dataset_stats=STATS)
    folder.mkdir(parents=True, exist_ok=True)
    policy.save_pretrained(folder)
    pre.save_pretrained(folder)
    post.save_pretrained(folder)
    mapping = {"observation": {"observation.state": "toolPosition", "observation.environment_state": "toolPosition"}}
    (folder / MAPPING_FILE).write_text(json.dumps(mapping), encoding="utf-8")
    return folder


def obs_at(t: int) -> dict[str, Any]:
    return {"toolPosition": np.array([0.01 * t, -0.7 + 0.03 * t], np.float32)}


def roll(p: LeRobotPolicy, slot: int, steps: int) -> tuple[list[list[float]], list[int]]:
    """Actions and queue lengths (after each step) of one episode on slot `slot`."""
    p.reset(slot, f"ep{slot}")
    actions, queue = [], []
    for t in range(steps):
        actions.append(p.infer(slot, obs_at(t), None)["action"].tolist())  # type: ignore[arg-type]
        queue.append(p.queue_length(slot))
    return actions, queue


def shellgame(checkpoint: Path) -> dict[str, Any]:
    """The committed ACT checkpoint on ShellGameTouch-lite's state dynamics, from the tool's home."""
    import lerobot_train_act as r

    p = LeRobotPolicy(max_batch=1, checkpoint=str(checkpoint))
    p.reset(0, "e")
    tool = r.HOME.copy()
    touched, at = None, None
    for t in range(r.MAX_STEPS):
        tool = r.step(tool, p.infer(0, {"toolPosition": tool.astype(np.float32)}, None)["action"].astype(np.float64))  # type: ignore[arg-type]
        hit = [c for c in range(3) if float(np.linalg.norm(tool - np.array([r.CUP_X[c], r.CUP_Y]))) <= r.TOUCH]
        if t >= r.CUE_STEPS and hit:
            touched, at = hit[0], t
            break
    return {"touched": touched, "at": at, "refills": p._slots[0].refills, "version": p.version, "files": sorted(p.identity_files())}


def main() -> None:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        act = LeRobotPolicy(max_batch=2, checkpoint=str(save("act", 0, base / "act0")))
        out["act_version"] = act.version
        out["act_loaded_before_reset"] = act.policy is not None  # hello comes first; the load waits for a reset
        a0, q0 = roll(act, 0, 10)
        out["act_config"] = {"n_action_steps": act.config.n_action_steps, "chunk_size": act.config.chunk_size}
        out["act_actions"], out["act_queue"], out["act_refills"] = a0, q0, act._slots[0].refills
        # the saved weights are the weights: a fresh from_pretrained has the same state dict
        ref = save("act", 0, base / "act0-again")
        same = LeRobotPolicy(max_batch=1, checkpoint=str(ref))
        out["act_same_seed_actions"] = roll(same, 0, 10)[0]
        out["act_state_dict_equal"] = all(torch.equal(v, same.policy.state_dict()[k]) for k, v in act.policy.state_dict().items())
        other = LeRobotPolicy(max_batch=1, checkpoint=str(save("act", 1, base / "act1")))
        out["act_other_seed_actions"] = roll(other, 0, 10)[0]
        # reset mid-chunk empties the queue; the next step refills it
        act.reset(1, "x")
        act.infer(1, obs_at(0), None)  # type: ignore[arg-type]
        act.infer(1, obs_at(1), None)  # type: ignore[arg-type]
        out["act_queue_before_reset"] = act.queue_length(1)
        act.reset(1, "y")
        out["act_queue_after_reset"] = act.queue_length(1)
        # two slots interleaved: each slot's queue is its own (same actions as alone)
        act.reset(0, "p")
        act.reset(1, "q")
        inter: list[list[list[float]]] = [[], []]
        for t in range(10):
            for slot in (0, 1):
                inter[slot].append(act.infer(slot, obs_at(t if slot == 0 else 9 - t), None)["action"].tolist())  # type: ignore[arg-type]
        out["act_interleaved_slot0"] = inter[0]

        diff = LeRobotPolicy(max_batch=2, checkpoint=str(save("diffusion", 0, base / "diff0")))
        d = diff._slots
        diff.reset(0, "d")
        diff.infer(0, obs_at(0), None)  # type: ignore[arg-type]
        queues = d[0].policy._queues
        out["diff_after_one_step"] = {k: len(v) for k, v in sorted(queues.items())}
        diff.reset(0, "d2")
        out["diff_after_reset"] = {k: len(v) for k, v in sorted(d[0].policy._queues.items())}
        da, dq = roll(diff, 0, 7)
        out["diff_actions"], out["diff_queue"], out["diff_refills"] = da, dq, d[0].refills
        out["diff_replicate_actions"] = roll(diff, 1, 7)[0]  # another slot, another episode: the same noise per step
    out["shellgame"] = shellgame(Path(sys.argv[1]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
