"""A pure runner of an IMEP checkpoint folder (model.json, format imep-checkpoint v1) in Python with onnxruntime.

It does what IMEP's own external-memory runtime does (src/policies/checkpoint.ts, onnx-backend.ts,
memory-policy.ts, memory/episode-slot-memory.ts, memory-input.ts, observation-packer.ts), so that the same
weights served from Python give the same actions:

* load: model.json read; every file it lists checked against its SHA-256 and size before anything is loaded
  (a mismatch raises CheckpointError naming the file, the expected and the actual value); one onnxruntime session
  per graph made from the verified bytes with the session options of onnx-backend.ts (CPU provider,
  graph optimisation level all, intra-op threads 1, inter-op threads 1, sequential execution); the graphs'
  declared inputs and outputs checked against the sessions.
* one step for a batch of (slot, observation) requests:
    1. encode(observation inputs stacked over the batch) → query_key [B, d], write_candidate [B, d], carries
    2. per slot in request order: (items, ctx) = its EpisodeBank's query with the slot's query key (top-k over the
       writes of steps 0..t−1 of the episode: read before write); items = read(slot, ctx, items) — the read hook,
       e.g. a `memory.read` call to IMEP; memory[row, j] = items[j].leaves[leaf] (float32 by value: float16 /
       bfloat16 / float64 leaves converted), memory_mask[row, j] = 1, the other k − |items| rows 0
    3. act(observation inputs, carries, memory [B, k, d], memory_mask [B, k]) → action, decision_logits
    4. per slot: its bank writes write_candidate[row] at the slot's step; the step advances.
  Only `episode` banks (with their declared capacity and consolidation, checkpoint_bank.py); a `structured-pcmb`
  checkpoint is refused.

    ckpt = OnnxCheckpoint("checkpoints/lite-memvla", max_batch=2)
    ckpt.reset(0, "ep-0")
    [out] = ckpt.step([(0, {"rgb": frame, "toolPosition": pose})], read=lambda slot, ctx, items: items)
    out.action, out.decision_logits, out.ctx, out.items
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .checkpoint_bank import EpisodeBank
from .codec import RawBitsArray
from .errors import AdapterError

FORMAT, VERSION, BATCH = "imep-checkpoint", 1, "batch"
OBS_DTYPES = {"float32": np.float32, "uint8": np.uint8, "int32": np.int32}
ORT_TYPES = {"float32": "tensor(float)", "uint8": "tensor(uint8)", "int32": "tensor(int32)", "int64": "tensor(int64)"}
_FILE_NAME = re.compile(r"^[A-Za-z0-9._-]+$")

#: read(slot, ctx, items) → the items the graph must read (the read hook's result).
ReadCallback = Callable[[int, dict[str, Any], list[dict[str, Any]]], Sequence[Mapping[str, Any]]]


class CheckpointError(AdapterError):
    """A checkpoint that does not load or does not fit what it is given (E_CHECKPOINT_MISMATCH in IMEP)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"E_CHECKPOINT_MISMATCH: {message}")


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """model.json of a checkpoint folder, with the fields this runner relies on checked."""
    path = Path(folder) / "model.json"
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path}: cannot read model.json ({exc}); give a folder holding model.json and the graph files") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT or m.get("version") != VERSION:
        raise CheckpointError(f"{path}: format must be {FORMAT} version {VERSION}")
    if m.get("backend") != "onnx":
        raise CheckpointError(f"{path}: backend is {m.get('backend')!r}; this runner runs onnx checkpoints only")
    files = m.get("files")
    if not isinstance(files, dict):
        raise CheckpointError(f"{path}: files must map file names to {{sha256, bytes}}")
    for g in ("encode", "act"):
        graph = (m.get("graphs") or {}).get(g)
        if not isinstance(graph, dict) or not isinstance(graph.get("inputs"), list) or not isinstance(graph.get("outputs"), list):
            raise CheckpointError(f"{path}: graphs.{g} must have file, inputs and outputs")
    return m


def verify_files(folder: str | Path, manifest: Mapping[str, Any]) -> dict[str, bytes]:
    """The bytes of every file model.json lists, each checked against its size and SHA-256 (else CheckpointError)."""
    base = Path(folder)
    out: dict[str, bytes] = {}
    for name, entry in sorted(manifest["files"].items()):
        if not _FILE_NAME.match(name) or not isinstance(entry, dict):
            raise CheckpointError(f"{base / 'model.json'}: files[{name!r}] must be a plain file name with {{sha256, bytes}}")
        try:
            data = (base / name).read_bytes()
        except OSError as exc:
            raise CheckpointError(f"{base / name}: cannot read it ({exc.strerror})") from None
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry.get("sha256"):
            raise CheckpointError(f"{name} has sha256 {digest}, model.json says {entry.get('sha256')} ({base / 'model.json'})")
        if len(data) != entry.get("bytes"):
            raise CheckpointError(f"{name} has {len(data)} bytes, model.json says {entry.get('bytes')} ({base / 'model.json'})")
        out[name] = data
    return out


def session_options(intra_op_threads: int = 1) -> Any:
    """onnx-backend.ts's session options: optimisation level all, intra-op threads, inter-op 1, sequential."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = intra_op_threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return so


def pack_observation(c: Mapping[str, Any], obs: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Observation field c["field"] of each observation stacked into c's dtype (observation-packer.ts)."""
    field, dtype = c.get("field"), c["dtype"]
    if dtype not in OBS_DTYPES:
        raise CheckpointError(f"input {c['name']}: observation inputs of dtype {dtype} are not supported (float32, uint8, int32)")
    rest = tuple(int(x) for x in c["shape"][1:])
    per = int(np.prod(rest, dtype=np.int64))
    out = np.zeros((len(obs), *rest), OBS_DTYPES[dtype])
    flat = out.reshape(len(obs), per)
    for i, o in enumerate(obs):
        v = o.get(field) if isinstance(field, str) else None
        if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and per == 1:
            v = np.array([v], np.float64)  # a JavaScript number
        if not isinstance(v, np.ndarray):
            got = "missing from the observation" if v is None else f"not an array ({type(v).__name__})"
            raise CheckpointError(f"observation field {field!r}: {got}")
        if (v.ndim > 1 and tuple(v.shape) != rest) or v.size != per:  # a flat array of the right length passes, as a typed array does
            raise CheckpointError(f"observation field {field!r}: shape {list(v.shape)}, the graph input needs {list(rest)}")
        if dtype == "uint8" and v.dtype != np.uint8:
            raise CheckpointError(f"observation field {field!r}: is {v.dtype}, the graph input needs uint8")
        if (v.dtype.kind in "iu" and v.dtype.itemsize == 8) or v.dtype.kind not in "iuf":
            raise CheckpointError(f"observation field {field!r}: {v.dtype} observations are not supported")
        flat[i] = v.reshape(per)  # float64 → float32 rounds to nearest even, as Float32Array.set does
    return out


def leaf_values(leaf: Any) -> np.ndarray | None:
    """A read item's leaf as float32 values (float16 / bfloat16 / float64 by value), or None when it is no float array."""
    if isinstance(leaf, RawBitsArray):
        return leaf.to_float32().reshape(-1)
    if isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f":
        return leaf.astype(np.float32).reshape(-1)
    return None


def fill_memory_row(memory: np.ndarray, mask: np.ndarray, row: int, items: Sequence[Mapping[str, Any]], leaf: str, episode: str) -> None:
    """memory-input.ts `fill`: row `row` of memory [B, k, d] / mask [B, k] from the items (at most k, d values each)."""
    k, d = memory.shape[1], memory.shape[2]
    if len(items) > k:
        raise AdapterError(
            f"E_INTERVENTION_INVALID: read of episode {episode}: the read hook returned {len(items)} items, the memory input holds k={k}"
        )
    for j, item in enumerate(items):
        leaves = item.get("leaves")
        raw = leaves.get(leaf) if isinstance(leaves, Mapping) else None
        v = leaf_values(raw)
        if v is None or v.size != d:
            what = f"no {leaf} leaf" if v is None else f"a {leaf} of {v.size} values"
            raise AdapterError(f"E_INTERVENTION_INVALID: read of episode {episode}: item {j} has {what}, the memory input needs {d}")
        memory[row, j] = v
        mask[row, j] = 1.0


@dataclass(frozen=True)
class StepOutput:
    """One slot's answer: its action row, decision logits (None when act has none), its read's ctx and items."""

    action: np.ndarray
    decision_logits: np.ndarray | None
    ctx: dict[str, Any]
    items: list[dict[str, Any]]

    def read_report(self) -> dict[str, Any]:
        """The hosted-policy `reads` entry of this step: {ctx, identities}."""
        return {"ctx": self.ctx, "identities": [dict(item["identity"]) for item in self.items]}


class OnnxCheckpoint:
    """A verified checkpoint's two onnxruntime sessions plus one EpisodeBank per slot."""

    def __init__(
        self,
        folder: str | Path,
        *,
        max_batch: int = 1,
        intra_op_threads: int = 1,
        decision_step: Callable[[int], bool] | None = None,
    ) -> None:
        if max_batch < 1 or intra_op_threads < 1:
            raise ValueError("max_batch and intra_op_threads must be positive")
        self.folder = Path(folder)
        # the folder and its hashes first: a wrong folder is named even where onnxruntime is missing
        self.manifest = m = read_manifest(folder)
        verified = verify_files(folder, m)
        import onnxruntime as ort

        bank = m.get("bank") or {}
        if bank.get("kind") != "episode":
            raise CheckpointError(f"{self.folder / 'model.json'}: bank.kind {bank.get('kind')!r}; this runner runs episode banks only")
        self.bank_spec: dict[str, Any] = dict(bank)
        self.k: int = int(bank["k"])
        self.leaf: str = str(bank["leaf"])
        self.graphs = m["graphs"]
        self.out_role = {r: o for o in self.graphs["encode"]["outputs"] + self.graphs["act"]["outputs"] for r in [o["role"]]}
        for role in ("queryKey", "writeCandidate", "action"):
            if role not in self.out_role:
                raise CheckpointError(f"{self.folder / 'model.json'}: no output of role {role}")
        self.d = int(self.out_role["writeCandidate"]["shape"][1])
        so = session_options(intra_op_threads)
        self.sessions: dict[str, Any] = {}
        for g in ("encode", "act"):
            file = self.graphs[g]["file"]
            if file not in verified:
                raise CheckpointError(f"{file} is needed but not listed in files (so its hash is unchecked) ({self.folder / 'model.json'})")
            self.sessions[g] = ort.InferenceSession(verified[file], sess_options=so, providers=["CPUExecutionProvider"])
            self._check_signature(g)
        self.max_batch = max_batch
        self.decision_step = decision_step or (lambda _step: True)
        self.banks = [EpisodeBank(bank["name"], int(bank["capacity"]), self.k, bank["consolidation"]) for _ in range(max_batch)]
        self.steps = [0] * max_batch
        self.versions = {"onnxruntime": ort.__version__}

    def _check_signature(self, g: str) -> None:
        s = self.sessions[g]
        have_in = {i.name: i.type for i in s.get_inputs()}
        have_out = {o.name: o.type for o in s.get_outputs()}
        for kind, declared, have in (("input", self.graphs[g]["inputs"], have_in), ("output", self.graphs[g]["outputs"], have_out)):
            for c in declared:
                t = have.get(c["name"])
                if t is None or t != ORT_TYPES.get(c["dtype"], t):
                    got = "absent" if t is None else t
                    raise CheckpointError(f"{self.graphs[g]['file']}: {kind} {c['name']} is {got}, model.json declares {c['dtype']}")

    def reset(self, slot: int, episode: str) -> None:
        """Starts episode `episode` in `slot`: its bank emptied, its step 0."""
        self.banks[self._slot(slot)].reset(episode)
        self.steps[slot] = 0

    def bank(self, slot: int) -> EpisodeBank:
        return self.banks[self._slot(slot)]

    def _slot(self, slot: int) -> int:
        if not isinstance(slot, int) or not 0 <= slot < self.max_batch:
            raise AdapterError(f"slot {slot} outside [0, {self.max_batch})")
        return slot

    def run(self, graph: str, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """One session run: {output name: array}."""
        s = self.sessions[graph]
        names = [o.name for o in s.get_outputs()]
        return dict(zip(names, s.run(names, dict(feeds))))

    def _output(self, out: Mapping[str, np.ndarray], c: Mapping[str, Any], graph: str, batch: int) -> np.ndarray:
        t = out.get(c["name"])
        want = (batch, *c["shape"][1:])
        if t is None or t.dtype != np.float32 or tuple(t.shape) != tuple(want):
            got = "nothing" if t is None else f"{t.dtype}{list(t.shape)}"
            raise CheckpointError(f"the {graph} graph returned {c['name']} as {got} for a batch of {batch}, contract says float32{list(c['shape'])}")
        return t

    def step(self, requests: Sequence[tuple[int, Mapping[str, Any]]], read: ReadCallback) -> list[StepOutput]:
        """One step of the slots in `requests` (in order): encode, each read through `read`, act, each write."""
        B = len(requests)
        if B == 0:
            return []
        slots = [self._slot(s) for s, _ in requests]
        if len(set(slots)) != B or B > self.max_batch:
            raise AdapterError(f"step: slots must be distinct and at most {self.max_batch}, got {slots}")
        for s in slots:
            if self.banks[s].episode is None:
                raise AdapterError(f"slot {s} was not reset")
        obs = [o for _, o in requests]
        enc_c = self.graphs["encode"]
        enc = self.run("encode", {c["name"]: pack_observation(c, obs) for c in enc_c["inputs"]})
        keys = self._output(enc, self.out_role["queryKey"], "encode", B)
        cands = self._output(enc, self.out_role["writeCandidate"], "encode", B)
        memory = np.zeros((B, self.k, self.d), np.float32)
        mask = np.zeros((B, self.k), np.float32)
        reads: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        for row, s in enumerate(slots):
            items, ctx = self.banks[s].query(keys[row], self.decision_step(self.steps[s]))
            got = [dict(item) for item in read(s, ctx, items)]
            fill_memory_row(memory, mask, row, got, self.leaf, ctx["episode"])
            reads.append((ctx, got))
        feeds: dict[str, np.ndarray] = {}
        for c in self.graphs["act"]["inputs"]:
            role = c["role"]
            if role == "observation":
                feeds[c["name"]] = pack_observation(c, obs)
            elif role == "carry":
                feeds[c["name"]] = self._output(enc, c, "encode", B)
            elif role == "memory":
                feeds[c["name"]] = memory
            elif role == "memoryMask":
                feeds[c["name"]] = mask
        act = self.run("act", feeds)
        action = self._output(act, self.out_role["action"], "act", B)
        logits_c = self.out_role.get("decisionLogits")
        logits = None if logits_c is None else self._output(act, logits_c, "act", B)
        outs: list[StepOutput] = []
        for row, s in enumerate(slots):
            self.banks[s].write(self.steps[s], cands[row])
            self.steps[s] += 1
            ctx, got = reads[row]
            outs.append(StepOutput(action[row].copy(), None if logits is None else logits[row].copy(), ctx, got))
        return outs
