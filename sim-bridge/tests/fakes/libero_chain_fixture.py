"""Writes a fake LIBERO root for the libero-chain executor (tests only): BDDL files + demo files.

    python3 tests/fakes/libero_chain_fixture.py ROOT   → prints {"root", "configPath", "demos": {task: {file, sha256}}}

Layout as LIBERO's (get_libero_path): ROOT/bddl_files/libero_90/<task>.bddl (the real files' :language
and :goal lines), ROOT/datasets/libero_90/<task>_demo.hdf5 (an .npz read by the fake h5py; keys
data/demo_<n>/actions (T×7) and data/demo_<n>/states (T×4), states[0] the demo's start). Per task,
three recorded demos (fake physics in libero_pkg/README.md: joint += 0.03·action, open above 0.1):

    top    (q index 1): demo_0 6 steps pushing action[0]=1 from 0  → open after step 4
                        demo_1 2 steps from 0                       → never open (a failing demo)
                        demo_2 6 steps from q_top 0.05              → open after step 2
    bottom (q index 3): demo_0 5 steps pushing action[2]=1 from 0  → open after step 4
                        demo_1 5 steps from 0.02                    → open after step 3
                        demo_2 3 steps from 0                       → never open (a failing demo)

ROOT/config/config.yaml is a LIBERO config file (the keys of get_default_path_dict(), pointing into ROOT):
serve with LIBERO_CONFIG_PATH=<configPath> (= ROOT/config), as a real LIBERO needs one — without it,
importing libero.libero prompts on stdin and the adapters answer E_SIM_UNAVAILABLE instead.

The demo index used for a chain is sceneSeed mod 3, so EXPECTED[(drawer, sceneSeed % 3)] is whether the
motion executes and after how many steps.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import zipfile
from pathlib import Path

import numpy as np

TOP = "KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet"
BOTTOM = "KITCHEN_SCENE1_open_the_bottom_drawer_of_the_cabinet"
#: task → (language, goal region, joint column in action, demos: [(steps, start q)])
TASKS = {
    TOP: ("open the top drawer of the cabinet", "top", 0, [(6, 0.0), (2, 0.0), (6, 0.05)]),
    BOTTOM: ("open the bottom drawer of the cabinet", "bottom", 2, [(5, 0.0), (5, 0.02), (3, 0.0)]),
}
#: (drawer k, demo index) → (executed, doneAt, motor steps); k = 0 top, 1 bottom
EXPECTED = {
    (0, 0): (True, 4, 4),
    (0, 1): (False, -1, 2),
    (0, 2): (True, 2, 2),
    (1, 0): (True, 4, 4),
    (1, 1): (True, 3, 3),
    (1, 2): (False, -1, 3),
}
STATE_INDEX = {"top": 1, "middle": 2, "bottom": 3}


def bddl(language: str, region: str) -> str:
    return (
        "(define (problem LIBERO_Kitchen_Tabletop_Manipulation)\n  (:domain robosuite)\n"
        f"  (:language {language})\n"
        "  (:fixtures\n    kitchen_table - kitchen_table\n    wooden_cabinet_1 - wooden_cabinet\n  )\n"
        f"  (:goal\n    (And (Open wooden_cabinet_1_{region}_region))\n  )\n\n)\n"
    )


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """A deterministic .npz (fixed zip timestamps), so the demo file's SHA-256 is stable."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        for key in sorted(arrays):
            body = io.BytesIO()
            np.save(body, arrays[key], allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, body.getvalue())
    return buf.getvalue()


def write_config(root: Path) -> Path:
    """ROOT/config/config.yaml with get_default_path_dict()'s keys (yaml.dump's layout: sorted `key: value` lines)."""
    paths = {"assets": "assets", "bddl_files": "bddl_files", "benchmark_root": "", "datasets": "datasets", "init_states": "init_files"}
    config = root / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.yaml").write_text("".join(f"{k}: {root / v if v else root}\n" for k, v in paths.items()), encoding="utf-8")
    return config


def write_fixture(root: Path) -> dict:
    out: dict = {"root": str(root), "configPath": str(write_config(root)), "demos": {}}
    for task, (language, region, col, demos) in TASKS.items():
        b = root / "bddl_files" / "libero_90" / f"{task}.bddl"
        b.parent.mkdir(parents=True, exist_ok=True)
        b.write_text(bddl(language, region), encoding="utf-8")
        arrays: dict[str, np.ndarray] = {}
        for n, (steps, q0) in enumerate(demos):
            actions = np.zeros((steps, 7))
            actions[:, col] = 1.0
            actions[:, 6] = -1.0  # gripper open, as LIBERO's dummy action
            states = np.zeros((steps, 4))
            for j in range(steps):
                states[j, 0] = j
                states[j, STATE_INDEX[region]] = q0 + 0.03 * j
            arrays[f"data/demo_{n}/actions"] = actions
            arrays[f"data/demo_{n}/states"] = states
        d = root / "datasets" / "libero_90" / f"{task}_demo.hdf5"
        d.parent.mkdir(parents=True, exist_ok=True)
        data = npz_bytes(arrays)
        d.write_bytes(data)
        out["demos"][task] = {"file": f"libero_90/{task}_demo.hdf5", "sha256": hashlib.sha256(data).hexdigest()}
    return out


if __name__ == "__main__":
    print(json.dumps(write_fixture(Path(sys.argv[1]))))
