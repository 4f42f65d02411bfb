"""Exports ShellNet (examples/python-host-torch/shell_net.py) as an IMEP checkpoint folder (docs/your-policy.md, "An ONNX checkpoint").

    .venvs/policies/bin/python examples/onnx-checkpoint/export.py --out examples/onnx-checkpoint/shell-net
    npx imep campaign run examples/onnx-checkpoint/protocol.yaml --through closeout

Writes OUT/encode.onnx and OUT/act.onnx (torch.onnx.export, opset 17, dynamic batch axis) and OUT/model.json -- the
I/O contract of both graphs (src/policies/README.md, "model.json (version 1)"), the episode bank IMEP keeps for the
policy between them, and the SHA-256 and size of every file. The weights are hand-set, so the folder is reproducible:
the committed examples/onnx-checkpoint/shell-net/ is what this script writes (test/examples checks it byte for byte).
IMEP, not the network, holds the bank: at step t it ranks the write_candidate of steps 0..t-1 by cosine to
query_key, passes the top k through the condition's read hook, and feeds what the hook returns as memory/memory_mask.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python-host-torch"))
from shell_net import FEATURE, WIDTH, ShellNet

K = 4
OPSET = 17
# The TorchScript-based exporter (dynamo=False): torch 2.13's torch.export-based default also needs onnxscript, which
# the policies venv does not install. Its deprecation notice is silenced here; any other warning still shows.
warnings.filterwarnings("ignore", message="You are using the legacy TorchScript-based ONNX export")


def export(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    net = ShellNet().eval()
    batch = {0: "batch"}
    rgb = torch.zeros(2, WIDTH, WIDTH, 3, dtype=torch.uint8)
    torch.onnx.export(
        net.encode,
        (rgb,),
        str(out / "encode.onnx"),
        dynamo=False,
        opset_version=OPSET,
        input_names=["rgb"],
        output_names=["query_key", "write_candidate", "ball_visible"],
        dynamic_axes={"rgb": batch, "query_key": batch, "write_candidate": batch, "ball_visible": batch},
    )
    act_inputs = (torch.zeros(2, 1), torch.zeros(2, 2), torch.zeros(2, K, FEATURE), torch.zeros(2, K))
    torch.onnx.export(
        net.act,
        act_inputs,
        str(out / "act.onnx"),
        dynamo=False,
        opset_version=OPSET,
        input_names=["ball_visible", "pose", "memory", "memory_mask"],
        output_names=["action", "decision_logits"],
        dynamic_axes={n: batch for n in ("ball_visible", "pose", "memory", "memory_mask", "action", "decision_logits")},
    )

    def f32(name: str, role: str, *dims: int, field: str | None = None, dtype: str = "float32") -> dict:
        t = {"name": name, "role": role, "dtype": dtype, "shape": ["batch", *dims]}
        return t if field is None else {**t, "field": field}

    files = {}
    for name in ("act.onnx", "encode.onnx"):
        data = (out / name).read_bytes()
        files[name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    manifest = {
        "format": "imep-checkpoint",
        "version": 1,
        "name": "shell-net",
        "description": "ShellNet (examples/python-host-torch/shell_net.py), hand-weighted: reads its episode bank for the ball cup",
        "backend": "onnx",
        "task": {"env": "ShellGameTouch-lite", "kwargs": {"blackoutFromStep": 6, "strict": True}},
        "graphs": {
            "encode": {
                "file": "encode.onnx",
                "inputs": [f32("rgb", "observation", WIDTH, WIDTH, 3, field="rgb", dtype="uint8")],
                "outputs": [
                    f32("query_key", "queryKey", FEATURE),
                    f32("write_candidate", "writeCandidate", FEATURE),
                    f32("ball_visible", "carry", 1),
                ],
            },
            "act": {
                "file": "act.onnx",
                "inputs": [
                    f32("ball_visible", "carry", 1),
                    f32("pose", "observation", 2, field="toolPosition"),
                    f32("memory", "memory", K, FEATURE),
                    f32("memory_mask", "memoryMask", K),
                ],
                "outputs": [f32("action", "action", 2), f32("decision_logits", "decisionLogits", 3)],
            },
        },
        "bank": {
            "kind": "episode",
            "name": "perceptual",
            "capacity": 96,
            "k": K,
            "consolidation": "fifo",
            "leaf": "feature",
            "order": "read-before-write",
        },
        "files": files,
        "training": {
            "recipe": "hand-set weights (examples/onnx-checkpoint/export.py); no training",
            "seeds": {"torch": 0},
            "torch": torch.__version__,
        },
    }
    (out / "model.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {out}/model.json, encode.onnx ({files['encode.onnx']['bytes']} bytes), act.onnx ({files['act.onnx']['bytes']} bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="the checkpoint folder to write")
    export(parser.parse_args().out)


if __name__ == "__main__":
    main()
