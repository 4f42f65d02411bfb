"""Policy host: serves a Python policy over the bridge (PROTOCOL.md, "Hosted policies").

    python3 -m imep_sim_bridge.policy_host --endpoint ENDPOINT --policy NAME [--module M] [--checkpoint DIR]
                                           [--read-deadline-s S]

The first stdout line is the bound endpoint (flushed); the host runs until SIGTERM or SIGINT. It
answers `hello` (with `policies: [names]`, the policy ops in `ops` and each policy's identity in
`policyIdentity`), `ping`, `policy.reset` and `policy.infer`; it hosts no environments (`make` →
E_UNKNOWN_ENV). `--module M` imports M (importable from the working directory or PYTHONPATH) and
serves the policies of its `POLICIES` mapping (name → class taking `max_batch=`) besides the built-in ones.
`--checkpoint DIR` gives a policy that serves a checkpoint folder (a class with `takes_checkpoint = True`, such as
the built-in `imep-checkpoint`, checkpoint_policy.py) its folder, as `checkpoint=DIR`.

A policy's identity (`policy_identity`) is what a campaign freezes at precommit: its version, its
memory (bank kind, bank names, k) and the SHA-256 of every file it is made of — the Python source
file of its class's module and every file it lists in `identity_files()` (e.g. the weights it loads).

A hosted policy keeps its own bank in Python, and every bank read goes through `MemoryReadProxy`
(a `memory.read` call to the client, whose read hook may substitute, block or reorder the items):
the policy acts on what the client returns, never on what it selected. A read that times out fails
the `policy.infer` (E_ADAPTER, message starting E_BRIDGE_TIMEOUT); it is never served unintervened.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import inspect
import signal
import sys
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

from .checkpoint_policy import POLICIES as CHECKPOINT_POLICIES
from .codec import RawBitsArray
from .envelope import Envelope, body_str, is_uint
from .errors import E_BAD_MESSAGE, E_UNKNOWN_OP, AdapterError, BridgeError
from .memory_read import DEFAULT_DEADLINE_S, MemoryReadProxy
from .remember_color_policy import POLICIES as REMEMBER_COLOR_POLICIES
from .server import OPS, BridgeServer, stderr_log

POLICY_OPS = ("policy.reset", "policy.infer")
HOST_NAME = "imep-policy-host"


class HostedPolicy(Protocol):
    """What the host serves. `infer` must make every bank read through `memory.read`."""

    name: str
    max_batch: int
    # optional: version (str), bank (str), k (int), identity_files() -> {name: path}

    def reset(self, slot: int, episode: str) -> None: ...

    def infer(self, slot: int, obs: dict[str, Any], memory: MemoryReadProxy) -> dict[str, Any]:
        """`{action: float32 ndarray, decisionLogits?: float ndarray, reads: [{ctx, identities}]}`."""
        ...


# ---------------------------------------------------------------------------- reference policy

CUP_X = (-0.5, 0.0, 0.5)
CUP_Y = 0.25
CUE_STEPS = 5  # ShellGameTouch-lite shows the ball at elapsed steps 0-4
STEP_LEN = 0.05  # below the env's 0.06 per-step limit
BALL_RGB_MIN_R, BALL_RGB_MAX_GB = 200, 60  # the ball is (230, 20, 20); nothing else is that red


def ball_feature(rgb: np.ndarray) -> np.ndarray:
    """float32 [4]: ball-coloured pixel counts in the left, middle and right thirds of the frame, and 1."""
    if not isinstance(rgb, np.ndarray) or rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise AdapterError("shell-game-memory: obs.rgb must be a uint8 [H, W, 3] ndarray")
    red = (rgb[:, :, 0] >= BALL_RGB_MIN_R) & (rgb[:, :, 1] <= BALL_RGB_MAX_GB) & (rgb[:, :, 2] <= BALL_RGB_MAX_GB)
    cols = red.sum(axis=0)
    w = rgb.shape[1]
    edges = (0, w // 3, (2 * w) // 3, w)
    counts = [float(cols[edges[i] : edges[i + 1]].sum()) for i in range(3)]
    return np.array([*counts, 1.0], np.float32)


class _Slot:
    def __init__(self) -> None:
        self.episode: str | None = None
        self.t = 0
        self.entries: list[tuple[int, np.ndarray]] = []  # (timestep, feature)


class ShellGameMemoryPolicy:
    """A deterministic memory policy for ShellGameTouch-lite (a positive control for hosted policies).

    Each step t: feature f_t = `ball_feature(rgb)`; read (through `memory.read`) the top-k of this
    episode's stored features f_0 … f_{t-1} by float64 cosine similarity to the query (1, 1, 1, 0)
    (ties → earlier timestep; ctx.queryIndex = t + 1, candidateCount = t); decisionLogits = the sum of
    the first three components of the features it got back; then write f_t (read before write).
    Action: 0 while t < 5 (the cue phase: touches do not count); afterwards a step of length ≤ 0.05
    toward cup argmax(logits), or toward cup 0 when the logits are all zero (nothing usable was read).
    With its reads intact it finds the ball cup from the cue frames; with reads blocked it always
    goes to cup 0 (success 1/3 in expectation over uniformly seeded ball cups).
    """

    name = "shell-game-memory"
    version = "1"
    bank = "perceptual"
    k = 4
    query = np.array([1.0, 1.0, 1.0, 0.0], np.float64)

    def __init__(self, max_batch: int = 64) -> None:
        self.max_batch = max_batch
        self._slots = [_Slot() for _ in range(max_batch)]

    def reset(self, slot: int, episode: str) -> None:
        s = self._slots[slot]
        s.episode, s.t, s.entries = episode, 0, []

    def _select(self, s: _Slot) -> list[tuple[int, int, np.ndarray]]:
        qn = float(np.linalg.norm(self.query))
        scored = []
        for index, (timestep, f) in enumerate(s.entries):
            v = f.astype(np.float64)
            n = float(np.linalg.norm(v))
            sim = float(v @ self.query) / (n * qn) if n > 0 else 0.0
            scored.append((-sim, timestep, index, f))
        scored.sort(key=lambda e: (e[0], e[1]))
        return [(index, timestep, f) for _, timestep, index, f in scored[: self.k]]

    def infer(self, slot: int, obs: dict[str, Any], memory: MemoryReadProxy) -> dict[str, Any]:
        s = self._slots[slot]
        if s.episode is None:
            raise AdapterError(f"{self.name}: slot {slot} was not reset")
        tool = obs.get("toolPosition")
        if not isinstance(tool, np.ndarray) or tool.shape != (2,):
            raise AdapterError(f"{self.name}: obs.toolPosition must be a [2] ndarray")
        feature = ball_feature(obs.get("rgb"))  # type: ignore[arg-type]
        ep = s.episode
        items = [
            {
                "identity": {"slot": index, "scope": ep, "sourceEpisode": ep, "timestep": timestep, "version": 0},
                "leaves": {"feature": f.copy()},
            }
            for index, timestep, f in self._select(s)
        ]
        ctx = {
            "bank": self.bank,
            "scope": ep,
            "episode": ep,
            "queryIndex": s.t + 1,
            "decisionStep": True,
            "candidateCount": len(s.entries),
        }
        got = memory.read(self.bank, ctx, items)
        if len(got) > self.k:
            raise AdapterError(f"{self.name}: the read hook returned {len(got)} items, more than k = {self.k}")
        logits = np.zeros(3, np.float64)
        for i, item in enumerate(got):
            leaf = item["leaves"].get("feature")
            if isinstance(leaf, RawBitsArray):  # float16/bfloat16 raw bits: fed by value
                leaf = leaf.to_float32()
            if not isinstance(leaf, np.ndarray) or leaf.shape != (4,):
                raise AdapterError(f"{self.name}: read item {i} has no [4] 'feature' leaf")
            logits += leaf.astype(np.float64)[:3]
        action = np.zeros(2, np.float32)
        if s.t >= CUE_STEPS:
            target = int(np.argmax(logits)) if float(logits.sum()) > 0 else 0
            d = np.array([CUP_X[target], CUP_Y], np.float64) - tool.astype(np.float64)
            dist = float(np.linalg.norm(d))
            if dist > 0:
                action = (d * (min(STEP_LEN, dist) / dist)).astype(np.float32)
        s.entries.append((s.t, feature))
        s.t += 1
        return {
            "action": action,
            "decisionLogits": logits.astype(np.float32),
            "reads": [{"ctx": ctx, "identities": [dict(item["identity"]) for item in got]}],
        }


POLICIES = {ShellGameMemoryPolicy.name: ShellGameMemoryPolicy, **REMEMBER_COLOR_POLICIES, **CHECKPOINT_POLICIES}


# ---------------------------------------------------------------------------- identity


def _file_entry(path: str, file: Path) -> dict[str, Any]:
    data = file.read_bytes()
    return {"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def policy_identity(policy: HostedPolicy) -> dict[str, Any]:
    """`{version, memory: {bank, banks, k}, files: [{path, bytes, sha256}]}` (files sorted by path).

    The class's module source is listed by its module path (`pkg/mod.py`), so the entry does not
    depend on where the package is installed; `identity_files()` entries by the names the policy gives.
    """
    cls = type(policy)
    module = sys.modules.get(cls.__module__)
    try:
        source = inspect.getsourcefile(module) if module is not None else None
    except TypeError:  # a built-in module (e.g. `python -c`): no source file to list
        source = None
    files: list[dict[str, Any]] = []
    if source is not None:
        name = cls.__module__
        if name == "__main__":  # run as `python -m pkg.mod`: its import name, else the file's stem
            spec = getattr(module, "__spec__", None)
            name = spec.name if spec is not None else Path(source).stem
        suffix = "/__init__.py" if Path(source).name == "__init__.py" else ".py"
        files.append(_file_entry(name.replace(".", "/") + suffix, Path(source)))
    extra = getattr(policy, "identity_files", None)
    if callable(extra):
        for label, path in sorted(dict(extra()).items()):
            files.append(_file_entry(str(label), Path(path)))
    files.sort(key=lambda f: f["path"])
    bank = getattr(policy, "bank", None)
    memory: dict[str, Any] = {"bank": "episode-local"}
    if bank == "history":  # no bank of its own: IMEP gives it the episode's history (memory.bank: history)
        memory = {"bank": "history"}
    elif isinstance(bank, str):
        memory["banks"] = [bank]
    k = getattr(policy, "k", None)
    if isinstance(k, int):
        memory["k"] = k
    return {"version": str(getattr(policy, "version", "0")), "memory": memory, "files": files}


def load_policies(module: str | None) -> dict[str, Any]:
    """The built-in policies, plus `module`'s `POLICIES` mapping when given (ValueError on a clash)."""
    out: dict[str, Any] = dict(POLICIES)
    if module is None:
        return out
    mod = importlib.import_module(module)
    extra = getattr(mod, "POLICIES", None)
    if not isinstance(extra, dict) or not extra:
        raise ValueError(f"module {module} has no POLICIES mapping (name -> policy class)")
    for name, factory in extra.items():
        if name in out and out[name] is not factory:
            raise ValueError(f"module {module} redefines policy '{name}'")
        out[str(name)] = factory
    return out


# ---------------------------------------------------------------------------- host


class PolicyHost(BridgeServer):
    """A BridgeServer that also answers `policy.reset` / `policy.infer` for its hosted policies."""

    def __init__(self, policies: Sequence[HostedPolicy], *, read_deadline_s: float = DEFAULT_DEADLINE_S, **kwargs: Any) -> None:
        kwargs.setdefault("name", HOST_NAME)
        super().__init__([], **kwargs)
        names = [p.name for p in policies]
        if len(set(names)) != len(names):
            raise ValueError(f"policy names must be unique: {names}")
        self.policies = {p.name: p for p in policies}
        self.read_deadline_s = read_deadline_s
        #: memory.read calls answered by the client, over all policies (the host's side of the read count)
        self.reads = 0

    def _dispatch(self, env: Envelope) -> dict[str, Any]:
        if env.op == "policy.reset":
            return self._op_policy_reset(env.body)
        if env.op == "policy.infer":
            return self._op_policy_infer(env.body)
        try:
            return super()._dispatch(env)
        except BridgeError as exc:
            if exc.code == E_UNKNOWN_OP:
                ops = ", ".join((*OPS, *POLICY_OPS))
                raise BridgeError(f"unknown op '{env.op}'; this server answers {ops}", code=E_UNKNOWN_OP) from None
            raise

    def _op_hello(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = super()._op_hello(body)
        reply["ops"] = [*OPS, *POLICY_OPS]
        reply["policies"] = sorted(self.policies)
        reply["policyIdentity"] = {name: policy_identity(p) for name, p in sorted(self.policies.items())}
        return reply

    def _policy(self, body: dict[str, Any]) -> HostedPolicy:
        name = body_str(body, "policy")
        policy = self.policies.get(name)
        if policy is None:
            raise AdapterError(f"no hosted policy '{name}' (this host serves: {', '.join(sorted(self.policies))})")
        return policy

    @staticmethod
    def _slot(policy: HostedPolicy, value: Any, where: str) -> int:
        if not is_uint(value):
            raise BridgeError(f"{where} must be a uint", code=E_BAD_MESSAGE)
        if value >= policy.max_batch:
            raise AdapterError(f"{where} = {value} is outside [0, {policy.max_batch}) for policy '{policy.name}'")
        return int(value)

    def _op_policy_reset(self, body: dict[str, Any]) -> dict[str, Any]:
        policy = self._policy(body)
        slot = self._slot(policy, body.get("slot"), "body field 'slot'")
        episode = body.get("episode")
        if not isinstance(episode, dict):
            raise BridgeError("body field 'episode' must be a map", code=E_BAD_MESSAGE)
        episode_id = episode.get("episode")
        if not isinstance(episode_id, str) or not episode_id:
            raise BridgeError("body field 'episode.episode' must be a non-empty string", code=E_BAD_MESSAGE)
        policy.reset(slot, episode_id)
        return {}

    def _op_policy_infer(self, body: dict[str, Any]) -> dict[str, Any]:
        policy = self._policy(body)
        requests = body.get("requests")
        if not isinstance(requests, list):
            raise BridgeError("body field 'requests' must be an array", code=E_BAD_MESSAGE)
        slots: list[int] = []
        for i, r in enumerate(requests):
            if not isinstance(r, dict) or not isinstance(r.get("obs"), dict):
                raise BridgeError(f"body field 'requests[{i}]' must be a map with an 'obs' map", code=E_BAD_MESSAGE)
            slots.append(self._slot(policy, r.get("slot"), f"body field 'requests[{i}].slot'"))
        if len(set(slots)) != len(slots):
            raise AdapterError(f"policy.infer: slots must be distinct, got {slots}")
        proxy = MemoryReadProxy(self, deadline_s=self.read_deadline_s)
        try:
            outputs = [policy.infer(slot, r["obs"], proxy) for slot, r in zip(slots, requests)]
        finally:
            self.reads += proxy.reads
        return {"outputs": outputs}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m imep_sim_bridge.policy_host", description="IMEP policy host (protocol v1)")
    parser.add_argument("--endpoint", required=True, help="ipc://PATH or tcp://127.0.0.1:PORT (loopback only)")
    parser.add_argument("--policy", required=True, help=f"the policy to serve (built in: {', '.join(sorted(POLICIES))})")
    parser.add_argument("--module", help="import this module and also serve its POLICIES mapping (name -> class)")
    parser.add_argument("--checkpoint", help="the checkpoint folder of a policy that serves one (e.g. imep-checkpoint)")
    parser.add_argument("--max-batch", type=int, default=64, help="slots the policy holds (default 64)")
    parser.add_argument("--read-deadline-s", type=float, default=DEFAULT_DEADLINE_S, help="deadline of each memory.read")
    parser.add_argument("--verbose", action="store_true", help="log every error reply to stderr")
    return parser


def _loopback_or_ipc(endpoint: str) -> bool:
    scheme, _, rest = endpoint.partition("://")
    if scheme == "ipc":
        return True
    host = rest.rsplit(":", 1)[0]
    return scheme == "tcp" and host in ("127.0.0.1", "localhost", "[::1]")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not _loopback_or_ipc(args.endpoint):
        print(f"imep-policy-host: error: endpoint '{args.endpoint}' is not ipc:// or loopback tcp (no CurveZMQ here)", file=sys.stderr)
        return 2
    if args.max_batch < 1:
        print("imep-policy-host: error: --max-batch must be ≥ 1", file=sys.stderr)
        return 2
    try:
        policies = load_policies(args.module)
    except (ImportError, ValueError) as exc:
        print(f"imep-policy-host: error: --module {args.module}: {exc}", file=sys.stderr)
        return 2
    if args.policy not in policies:
        print(f"imep-policy-host: error: no policy '{args.policy}' (this host can serve: {', '.join(sorted(policies))})", file=sys.stderr)
        return 2
    factory = policies[args.policy]
    takes = bool(getattr(factory, "takes_checkpoint", False))
    if takes != (args.checkpoint is not None):
        why = "needs --checkpoint DIR" if takes else "serves no checkpoint: remove --checkpoint"
        print(f"imep-policy-host: error: policy '{args.policy}' {why}", file=sys.stderr)
        return 2
    try:
        policy = factory(max_batch=args.max_batch, **({"checkpoint": args.checkpoint} if takes else {}))
    except (BridgeError, ValueError, OSError, ImportError) as exc:
        print(f"imep-policy-host: error: policy '{args.policy}': {exc}", file=sys.stderr)
        return 2
    host = PolicyHost(
        [policy],
        read_deadline_s=args.read_deadline_s,
        log=stderr_log if args.verbose else None,
    )
    signal.signal(signal.SIGTERM, lambda *_: host.stop())
    signal.signal(signal.SIGINT, lambda *_: host.stop())
    try:
        print(host.bind(args.endpoint), flush=True)
        host.serve_forever()
    finally:
        host.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
