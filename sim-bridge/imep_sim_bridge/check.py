"""`python3 -m imep_sim_bridge check --adapters A --env ID [--kwargs JSON] [--seed S]`: can this env run here?

Makes the env in this process (as a served `make` would), resets it with the seed and closes it; prints
one JSON line {env, spec, environment, resetFields} (the spec on the wire, what the adapter reports
about its simulator stack — packages, renderer — and the reset's field names) and exits 0. Whatever
stops it — a simulator package that is not installed, no headless renderer, an env id no adapter
hosts, a seed the simulator cannot take, bad kwargs — is one line on stderr and exit status 2. It
writes no file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from .adapters import build_adapters
from .errors import BridgeError


class CheckError(Exception):
    pass


def run_check(args: argparse.Namespace) -> dict[str, Any]:
    names = [n.strip() for n in (args.adapters or "").split(",") if n.strip()]
    if not names:
        raise CheckError("--adapters is required (e.g. --adapters libero)")
    try:
        kwargs = json.loads(args.kwargs) if args.kwargs else {}
    except json.JSONDecodeError as exc:
        raise CheckError(f"--kwargs is not JSON: {exc}") from None
    if not isinstance(kwargs, dict):
        raise CheckError("--kwargs must be a JSON object")
    try:
        adapters = build_adapters(names, replay_dir=args.replay_dir)
    except ValueError as exc:
        raise CheckError(str(exc)) from None
    adapter = next((a for a in adapters if a.owns(args.env)), None)
    if adapter is None:
        ids = [i for a in adapters for i in a.env_ids()]
        shown = f"{ids[0]} … {ids[-1]}" if len(ids) > 1 else ", ".join(ids) or "none"
        raise CheckError(f"no adapter of {', '.join(names)} hosts env '{args.env}' ({len(ids)} envs: {shown})")
    try:
        with contextlib.redirect_stdout(sys.stderr):  # LIBERO prints progress on stdout; stdout is the JSON line only
            env = adapter.make(args.env, kwargs)
            try:
                spec = env.spec()
                raw = env.reset(args.seed, {}, None)
            finally:
                env.close()
    except BridgeError as exc:
        raise CheckError(exc.message) from None
    describe = getattr(adapter, "environment", None)
    return {
        "env": args.env,
        "spec": spec.to_wire(),
        "environment": describe() if callable(describe) else None,
        "resetFields": sorted(raw.fields),
    }
