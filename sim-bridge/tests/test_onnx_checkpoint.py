"""The Python runner of IMEP checkpoints (onnx_checkpoint.py) and its episode bank (checkpoint_bank.py).

Bank arithmetic against hand-computed values; the runner on checkpoints/lite-memvla (skipped only where
onnxruntime is not importable). Its byte equality with IMEP's own runtime is test/policies/hosted-checkpoint.test.ts.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from imep_sim_bridge.checkpoint_bank import EpisodeBank, average_features, cosine, dot64, top_k, unit_of_values
from imep_sim_bridge.codec import RawBitsArray
from imep_sim_bridge.errors import AdapterError

LITE = Path(__file__).resolve().parents[2] / "checkpoints" / "lite-memvla"
ACT_SHA = "6ddf38545ee20c180edd08263736006f96b821c40101243868f6f2a7058e635c"


def f32(*v: float) -> np.ndarray:
    return np.array(v, np.float32)


# ---------------------------------------------------------------------------- bank arithmetic


def test_unit_vector_prescales_and_degenerates_to_zero() -> None:
    assert unit_of_values([3.0, 4.0]) == [0.6, 0.8]  # y = (0.75, 1), ‖y‖ = 1.25
    assert unit_of_values([0.0, -0.0]) == [0.0, 0.0]
    assert unit_of_values([1.0, math.nan]) == [0.0, 0.0]
    assert unit_of_values([math.inf, 1.0]) == [0.0, 0.0]
    huge = unit_of_values([3e300, 4e300])  # no overflow thanks to the max-abs pre-scaling
    assert huge == [0.6, 0.8]


def test_dot64_sums_four_lanes_then_pairs() -> None:
    # lane 0 holds a[0] + a[4] = 1e16 + 1 → 1e16 (ties to even), lane 1: 1, lane 2: -1e16, lane 3: 0
    # → (1e16 + 1) + (-1e16 + 0) = 0; summing in index order instead gives 1
    a = [1e16, 1.0, -1e16, 0.0, 1.0]
    assert dot64(a, [1.0] * 5) == 0.0
    assert sum(a) == 1.0


def test_top_k_breaks_ties_by_earlier_timestep_then_index() -> None:
    u = unit_of_values([1.0, 0.0])
    v = unit_of_values([0.0, 1.0])
    entries = [(5, v), (3, u), (1, u), (1, u)]
    assert [i for i, _ in top_k(entries, u, 3)] == [2, 3, 1]  # equal similarity 1: timestep 1 (index 2, 3), then 3
    assert top_k(entries, u, 10)[-1] == (0, 0.0)


def test_average_features_rounds_to_float32_and_avoids_overflow() -> None:
    big = np.float32(3e38)
    out = average_features(f32(big, 1.0), f32(big, 2.0))
    assert out.dtype == np.float32
    assert out[0] == big and out[1] == np.float32(1.5)


def test_bank_reads_before_write_with_typescript_identities() -> None:
    bank = EpisodeBank("perceptual", capacity=8, k=2)
    bank.reset("ep")
    items, ctx = bank.query(f32(1, 0))
    assert items == [] and ctx == {
        "bank": "perceptual",
        "scope": "ep",
        "episode": "ep",
        "queryIndex": 1,
        "decisionStep": True,
        "candidateCount": 0,
    }
    bank.write(0, f32(1, 0))
    bank.write(1, f32(0, 1))
    bank.write(2, f32(2, 0))  # same direction as timestep 0
    items, ctx = bank.query(f32(1, 0.1), decision_step=False)
    assert [it["identity"] for it in items] == [
        {"slot": 0, "scope": "ep", "sourceEpisode": "ep", "timestep": 0, "version": 0},
        {"slot": 2, "scope": "ep", "sourceEpisode": "ep", "timestep": 2, "version": 0},
    ]
    assert ctx["queryIndex"] == 2 and ctx["candidateCount"] == 3 and ctx["decisionStep"] is False
    np.testing.assert_array_equal(items[1]["leaves"]["feature"], f32(2, 0))
    items[1]["leaves"]["feature"][0] = 9  # a copy: the bank keeps its own
    assert bank.entries()[2][1][0] == 2


def test_token_merge_merges_the_most_similar_adjacent_pair_keeping_the_earlier_timestep() -> None:
    bank = EpisodeBank("perceptual", capacity=3, k=4, consolidation="token-merge")
    bank.reset("ep")
    for t, f in enumerate([f32(1, 0), f32(0, 1), f32(0.1, 1), f32(1, 1)]):
        c = bank.write(t, f)
    assert c is not None and (c.kind, c.index, c.timestep) == ("token-merge", 1, 1)
    assert c.similarity == cosine(f32(0, 1), f32(0.1, 1))
    assert [t for t, _ in bank.entries()] == [0, 1, 3]
    np.testing.assert_array_equal(bank.entries()[1][1], f32(0.05, 1))
    fifo = EpisodeBank("perceptual", capacity=2, k=4, consolidation="fifo")
    fifo.reset("ep")
    for t in range(3):
        fifo.write(t, f32(t, 1))
    assert [t for t, _ in fifo.entries()] == [1, 2]


def test_bank_refuses_misuse() -> None:
    bank = EpisodeBank()
    with pytest.raises(ValueError, match="call reset"):
        bank.query(f32(1))
    bank.reset("ep")
    bank.write(3, f32(1, 2))
    with pytest.raises(ValueError, match="before the last entry's 3"):
        bank.write(2, f32(1, 2))
    with pytest.raises(ValueError, match="3 elements, entries have 2"):
        bank.query(f32(1, 2, 3))


# ---------------------------------------------------------------------------- memory input and observations

from imep_sim_bridge.onnx_checkpoint import CheckpointError, fill_memory_row, pack_observation, verify_files  # noqa: E402


def test_memory_row_by_value_with_mask_and_refusals() -> None:
    memory = np.zeros((2, 3, 2), np.float32)
    mask = np.zeros((2, 3), np.float32)
    half = np.array([0.1, 2.0], np.float16)
    items = [
        {"identity": {}, "leaves": {"feature": f32(1, 2)}},
        {"identity": {}, "leaves": {"feature": half}},
        {"identity": {}, "leaves": {"feature": RawBitsArray.bfloat16_from_float32(f32(3, -1))}},
    ]
    fill_memory_row(memory, mask, 1, items[:2], "feature", "ep")
    np.testing.assert_array_equal(memory[1, :2], [[1, 2], half.astype(np.float32)])
    assert mask.tolist() == [[0, 0, 0], [1, 1, 0]] and memory[0].sum() == 0 and memory[1, 2].sum() == 0
    fill_memory_row(memory, mask, 0, [items[2], {"leaves": {"feature": np.array([1 + 2**-30, 0.0])}}], "feature", "ep")
    assert memory[0, 0].tolist() == [3, -1] and memory[0, 1].tolist() == [1, 0]  # float64 rounded to float32
    with pytest.raises(AdapterError, match="returned 4 items, the memory input holds k=3"):
        fill_memory_row(memory, mask, 0, items + items[:1], "feature", "ep")
    with pytest.raises(AdapterError, match="item 0 has a feature of 3 values, the memory input needs 2"):
        fill_memory_row(memory, mask, 0, [{"leaves": {"feature": f32(1, 2, 3)}}], "feature", "ep")
    with pytest.raises(AdapterError, match="item 0 has no feature leaf"):
        fill_memory_row(memory, mask, 0, [{"leaves": {"colour": f32(1, 2)}}], "feature", "ep")


def test_pack_observation_by_contract() -> None:
    c = {"name": "cue", "dtype": "float32", "shape": ["batch"], "field": "cue"}
    assert pack_observation(c, [{"cue": 2}, {"cue": np.float64(0.5)}]).tolist() == [2.0, 0.5]
    c = {"name": "cubes", "dtype": "float32", "shape": ["batch", 3, 4], "field": "cubes"}
    out = pack_observation(c, [{"cubes": np.arange(12, dtype=np.float64).reshape(3, 4)}])
    assert out.dtype == np.float32 and out.shape == (1, 3, 4) and out[0, 2, 3] == 11
    with pytest.raises(CheckpointError, match=r"shape \[4, 3\], the graph input needs \[3, 4\]"):
        pack_observation(c, [{"cubes": np.zeros((4, 3))}])
    with pytest.raises(CheckpointError, match="'cubes': missing"):
        pack_observation(c, [{}])
    rgb = {"name": "rgb", "dtype": "uint8", "shape": ["batch", 2, 2, 3], "field": "rgb"}
    with pytest.raises(CheckpointError, match="is float32, the graph input needs uint8"):
        pack_observation(rgb, [{"rgb": np.zeros((2, 2, 3), np.float32)}])


def test_verify_files_names_file_expected_and_actual(tmp_path: Path) -> None:
    folder = tmp_path / "ck"
    shutil.copytree(LITE, folder)
    from imep_sim_bridge.onnx_checkpoint import read_manifest

    m = read_manifest(folder)
    assert set(verify_files(folder, m)) == {"act.onnx", "encode.onnx", "train-report.json"}
    data = bytearray((folder / "act.onnx").read_bytes())
    data[-1] ^= 1
    (folder / "act.onnx").write_bytes(bytes(data))
    import hashlib

    actual = hashlib.sha256(bytes(data)).hexdigest()
    with pytest.raises(CheckpointError, match=f"act.onnx has sha256 {actual}, model.json says {ACT_SHA}"):
        verify_files(folder, m)


# ---------------------------------------------------------------------------- the runner on lite-memvla


@pytest.fixture
def ort():
    return pytest.importorskip("onnxruntime", reason="onnxruntime is not installed in this Python (the mikasa / libero extras install it)")


def frame(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (64, 64, 3), dtype=np.uint8)


def test_runner_reads_before_write_and_feeds_what_the_hook_returns(ort) -> None:
    from imep_sim_bridge.onnx_checkpoint import OnnxCheckpoint

    ck = OnnxCheckpoint(LITE, max_batch=2)
    assert (ck.k, ck.d, ck.bank_spec["name"], ck.versions["onnxruntime"]) == (4, 8, "perceptual", ort.__version__)
    seen: list[tuple[int, dict, list]] = []

    def read(slot: int, ctx: dict, items: list) -> list:
        seen.append((slot, ctx, items))
        return items

    ck.reset(0, "a")
    ck.reset(1, "b")
    obs = lambda t, s: {"rgb": frame(10 * t + s), "toolPosition": f32(0.1 * s, 0.2)}  # noqa: E731
    for t in range(6):
        outs = ck.step([(1, obs(t, 1)), (0, obs(t, 0))], read)
    assert [s for s, _, _ in seen[:2]] == [1, 0]  # request order
    assert seen[0][1]["candidateCount"] == 0 and seen[-1][1]["candidateCount"] == 5  # read before write
    assert seen[-1][1] == {"bank": "perceptual", "scope": "a", "episode": "a", "queryIndex": 6, "decisionStep": True, "candidateCount": 5}
    assert outs[0].action.dtype == np.float32 and outs[0].action.shape == (2,) and outs[0].decision_logits.shape == (3,)
    # what the bank stored is encode's write candidate of each step, the memory the act graph got is what read returned
    enc = ck.run("encode", {"rgb": frame(50)[None]})
    assert ck.bank(0).entries()[-1][1].tobytes() == enc["write_candidate"][0].tobytes()
    # blocking the read (the N intervention) changes the input of act: same step, empty memory
    again = OnnxCheckpoint(LITE, max_batch=1)
    blocked = OnnxCheckpoint(LITE, max_batch=1)
    for ck_, hook in ((again, lambda s, c, i: i), (blocked, lambda s, c, i: [])):
        ck_.reset(0, "a")
        for t in range(6):
            [last] = ck_.step([(0, obs(t, 0))], hook)
        if ck_ is again:
            kept = last
    assert kept.action.tobytes() == outs[1].action.tobytes()  # batch of one = row of a batch of two
    assert last.items == [] and last.action.tobytes() != kept.action.tobytes()
    feeds = {
        "encoding": enc["encoding"],
        "pose": f32(0, 0.2)[None],
        "memory": np.zeros((1, 4, 8), np.float32),
        "memory_mask": np.zeros((1, 4), np.float32),
    }
    assert ck.run("act", feeds)["action"][0].tobytes() == last.action.tobytes()


def test_runner_refuses_a_tampered_file_before_loading(tmp_path: Path, ort) -> None:
    from imep_sim_bridge.onnx_checkpoint import OnnxCheckpoint

    folder = tmp_path / "ck"
    shutil.copytree(LITE, folder)
    (folder / "train-report.json").write_text("{}")
    with pytest.raises(CheckpointError, match="train-report.json has sha256 [0-9a-f]{64}, model.json says c278e407"):
        OnnxCheckpoint(folder)


# ---------------------------------------------------------------------------- the hosted policy imep-checkpoint


class Proxy:
    """A MemoryReadProxy stand-in: records each read and answers with what `answer` makes of the items."""

    def __init__(self, answer=lambda items: items) -> None:
        self.calls: list[tuple[str, dict, list]] = []
        self.answer = answer

    def read(self, bank: str, ctx: dict, items: list) -> list:
        self.calls.append((bank, ctx, items))
        return self.answer(items)


def test_hosted_checkpoint_policy_reads_through_memory_read_and_freezes_its_files(ort) -> None:
    import hashlib

    from imep_sim_bridge.checkpoint_policy import CheckpointPolicy
    from imep_sim_bridge.policy_host import POLICIES, policy_identity

    assert POLICIES["imep-checkpoint"] is CheckpointPolicy
    policy = CheckpointPolicy(max_batch=2, checkpoint=LITE)
    ident = policy_identity(policy)
    assert ident["version"] == f"1+onnxruntime-{ort.__version__}"
    assert ident["memory"] == {"bank": "episode-local", "banks": ["perceptual"], "k": 4}
    files = {f["path"]: f["sha256"] for f in ident["files"]}
    assert files["checkpoint/act.onnx"] == ACT_SHA
    assert files["checkpoint/model.json"] == hashlib.sha256((LITE / "model.json").read_bytes()).hexdigest()
    assert {"checkpoint/encode.onnx", "checkpoint/train-report.json", "imep_sim_bridge/checkpoint_policy.py"} <= set(files)
    assert {"imep_sim_bridge/onnx_checkpoint.py", "imep_sim_bridge/checkpoint_bank.py"} <= set(files)

    intact, blocked = Proxy(), Proxy(lambda items: [])
    policy.reset(0, "tok-a")
    policy.reset(1, "tok-b")
    for t in range(7):
        a = policy.infer(0, {"rgb": frame(t), "toolPosition": f32(0, 0.1)}, intact)  # type: ignore[arg-type]
        b = policy.infer(1, {"rgb": frame(t), "toolPosition": f32(0, 0.1)}, blocked)  # type: ignore[arg-type]
    bank, ctx, items = intact.calls[-1]
    assert bank == "perceptual" and ctx["episode"] == "tok-a" and ctx["queryIndex"] == 7 and len(items) == 4
    assert a["reads"] == [{"ctx": ctx, "identities": [it["identity"] for it in items]}]
    assert a["action"].dtype == np.float32 and a["decisionLogits"].dtype == np.float32
    assert b["reads"][0]["identities"] == [] and b["action"].tobytes() != a["action"].tobytes()
    with pytest.raises(ValueError, match="--checkpoint DIR"):
        CheckpointPolicy(max_batch=1)


def test_host_cli_gives_the_checkpoint_only_to_a_policy_that_serves_one(capsys) -> None:
    from imep_sim_bridge.policy_host import main

    assert main(["--endpoint", "ipc:///tmp/x.sock", "--policy", "imep-checkpoint"]) == 2
    assert "policy 'imep-checkpoint' needs --checkpoint DIR" in capsys.readouterr().err
    assert main(["--endpoint", "ipc:///tmp/x.sock", "--policy", "shell-game-memory", "--checkpoint", str(LITE)]) == 2
    assert "serves no checkpoint: remove --checkpoint" in capsys.readouterr().err
    assert main(["--endpoint", "ipc:///tmp/x.sock", "--policy", "imep-checkpoint", "--checkpoint", "/nonexistent"]) == 2
    assert "/nonexistent/model.json: cannot read model.json" in capsys.readouterr().err
