"""Command line: `python3 -m imep_sim_bridge serve ...`, `check ...`, `adapters` and `curve-keygen`.

    python3 -m imep_sim_bridge serve --endpoint ENDPOINT --adapters replay,mikasa,simplerenv,libero \
        --replay-dir DIR [--curve-secret-key-file FILE --curve-authorized-keys DIR] [--verbose]
    python3 -m imep_sim_bridge serve --adapters libero-chain [--libero-demo-pins PINS.json]
    python3 -m imep_sim_bridge check --adapters libero --env libero-mem/top-drawer-cue [--seed S]   (check.py)
    python3 -m imep_sim_bridge record-demos --adapter A --env ID --policy NAME --seeds A:B --out DIR   (demos/record.py)
    python3 -m imep_sim_bridge adapters [--json]   (the adapter table, adapters/__init__.py ADAPTERS)

The chain executor `libero-chain` (env LIBERO-ChainDrawers) is served only when named in --adapters.

The first stdout line is the bound endpoint (flushed), so a supervisor can read it; the server runs
until SIGTERM or SIGINT. Without `--endpoint` it binds `ipc://` inside a fresh private (0700)
directory. A tcp endpoint that is not loopback is refused unless CurveZMQ keys are given (the
server's secret key file and a directory of authorized client public keys). Errors a user can cause
exit non-zero with one line on stderr.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence

from . import __version__

PROG = "imep-sim-bridge"


class CliError(Exception):
    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def endpoint_is_local(endpoint: str) -> bool:
    """ipc:// and inproc://, or tcp:// bound to a loopback address."""
    scheme, sep, rest = endpoint.partition("://")
    if not sep:
        raise CliError(f"endpoint '{endpoint}' has no scheme (use ipc://PATH or tcp://HOST:PORT)")
    if scheme in ("ipc", "inproc"):
        return True
    if scheme != "tcp":
        return False
    host = rest.rsplit(":", 1)[0] if ":" in rest else rest
    host = host.split(";")[-1].strip("[]")
    if host in ("localhost", "lo"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # '*', interface names, host names: not provably loopback


def _load_curve(secret_file: str) -> tuple[bytes, bytes]:
    """A secret ZeroMQ certificate (the key file format both IMEP sides use; PROTOCOL.md "Curve keys")."""
    import zmq
    import zmq.auth

    if not os.path.isfile(secret_file):
        raise CliError(f"--curve-secret-key-file {secret_file}: no such file")
    try:
        public, secret = zmq.auth.load_certificate(secret_file)
    except Exception as exc:  # malformed certificate
        raise CliError(f"--curve-secret-key-file {secret_file}: not a ZeroMQ certificate ({exc})") from exc
    if not secret:
        raise CliError(f"--curve-secret-key-file {secret_file}: holds no secret key (use the .key_secret file)")
    if os.stat(secret_file).st_mode & 0o077:
        raise CliError(f"--curve-secret-key-file {secret_file}: readable by group or others (chmod 600 {secret_file})")
    try:
        derived = zmq.curve_public(secret)
    except Exception as exc:  # not a Z85 key
        raise CliError(f"--curve-secret-key-file {secret_file}: secret-key is not a Z85 Curve key ({exc})") from exc
    if derived != public:
        raise CliError(f"--curve-secret-key-file {secret_file}: secret-key does not belong to public-key (make a new pair)")
    return public, secret


def _serve(args: argparse.Namespace) -> int:
    from .adapters import ADAPTER_NAMES, CHAIN_ADAPTER_NAMES, build_adapters
    from .numba_cache import seed_numba_cache
    from .server import BridgeServer, stderr_log

    names = [n.strip() for n in (args.adapters or "").split(",") if n.strip()]
    if not names:
        names = [n for n in ADAPTER_NAMES if n != "replay" or args.replay_dir is not None]
    known = (*ADAPTER_NAMES, *CHAIN_ADAPTER_NAMES)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CliError(f"--adapters: unknown adapter(s) {', '.join(unknown)} (known: {', '.join(known)})")
    pins = None
    if args.libero_demo_pins is not None:
        if "libero-chain" not in names:
            raise CliError("--libero-demo-pins is for the libero-chain adapter: add it to --adapters")
        from .adapters.libero_chain import load_pins

        try:
            pins = load_pins(args.libero_demo_pins)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
    if "replay" in names and args.replay_dir is None:
        raise CliError("--adapters includes replay: give --replay-dir DIR")
    if args.replay_dir is not None and not os.path.isdir(args.replay_dir):
        raise CliError(f"--replay-dir {args.replay_dir}: no such directory")

    private_dir = None
    endpoint = args.endpoint
    if endpoint is None:
        private_dir = tempfile.mkdtemp(prefix="imep-bridge-")  # mode 0700
        endpoint = f"ipc://{private_dir}/bridge.sock"

    curve_public = curve_secret = None
    if args.curve_secret_key_file is not None:
        curve_public, curve_secret = _load_curve(args.curve_secret_key_file)
        if args.curve_authorized_keys is not None and not os.path.isdir(args.curve_authorized_keys):
            raise CliError(f"--curve-authorized-keys {args.curve_authorized_keys}: no such directory")
    if not endpoint_is_local(endpoint) and (curve_secret is None or args.curve_authorized_keys is None):
        raise CliError(
            f"endpoint {endpoint} is not loopback: refusing to serve without CurveZMQ keys "
            "(give --curve-secret-key-file FILE and --curve-authorized-keys DIR; "
            f"make keys with `python3 -m imep_sim_bridge curve-keygen DIR`)"
        )

    adapters = build_adapters(names, replay_dir=args.replay_dir, libero_demo_pins=pins)
    # in IMEP's sandbox numba cannot use the in-tree caches in place: copy them where it looks (numba_cache.py)
    seed_numba_cache(p for a in adapters for p in a.numba_packages)
    server = BridgeServer(adapters, log=stderr_log if args.verbose else None)
    try:
        import zmq

        try:
            bound = server.bind(
                endpoint,
                curve_public_key=curve_public,
                curve_secret_key=curve_secret,
                curve_authorized_keys_dir=args.curve_authorized_keys,
            )
        except zmq.ZMQError as exc:
            raise CliError(f"cannot bind {endpoint}: {exc}", status=1) from exc
        signal.signal(signal.SIGTERM, lambda *_: server.stop())
        signal.signal(signal.SIGINT, lambda *_: server.stop())
        print(bound, flush=True)
        server.serve_forever()
    finally:
        server.close()
        if private_dir is not None:
            shutil.rmtree(private_dir, ignore_errors=True)
    return 0


def _check(args: argparse.Namespace) -> int:
    import json

    from .check import CheckError, run_check

    try:
        print(json.dumps(run_check(args), sort_keys=True), flush=True)
    except CheckError as exc:
        raise CliError(str(exc)) from None
    return 0


def _record_demos(args: argparse.Namespace) -> int:
    import json

    from .demos.record import RecordError, run_record

    try:
        print(json.dumps({"summary": run_record(args)}, sort_keys=True), flush=True)
    except RecordError as exc:
        raise CliError(str(exc)) from None
    return 0


def _adapters(args: argparse.Namespace) -> int:
    import json

    from .adapters import ADAPTERS, OPTIONS, table_wire

    if args.json:
        print(json.dumps(table_wire(), sort_keys=True), flush=True)
        return 0
    for e in ADAPTERS:
        takes = "" if e.takes is None else f"  (takes {OPTIONS[e.takes]})"
        print(f"{e.name:<14} {e.role:<15} {e.module}.{e.cls}{takes}")
    return 0


def _keygen(args: argparse.Namespace) -> int:
    import zmq.auth

    os.makedirs(args.directory, mode=0o700, exist_ok=True)
    public_file, secret_file = zmq.auth.create_certificates(args.directory, args.name)
    os.chmod(secret_file, 0o600)
    print(secret_file)
    print(public_file)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m imep_sim_bridge", description="IMEP simulator bridge (protocol v1)")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve simulators over ZeroMQ until SIGTERM/SIGINT")
    serve.add_argument("--endpoint", help="ipc://PATH or tcp://HOST:PORT (default: ipc:// in a private 0700 directory)")
    serve.add_argument(
        "--adapters",
        help="comma-separated adapter names, as `adapters` lists them: replay,mikasa,simplerenv,libero,libero-chain "
        "(default: every campaign adapter; replay only with --replay-dir)",
    )
    serve.add_argument("--replay-dir", help="directory of replay files (<stem>.msgpack → env replay/<stem>)")
    serve.add_argument(
        "--libero-demo-pins",
        help="JSON {LIBERO task name: sha256} pinning the demo files the libero-chain executor replays",
    )
    serve.add_argument("--curve-secret-key-file", help="server CurveZMQ certificate with its secret key (.key_secret)")
    serve.add_argument("--curve-authorized-keys", help="directory of authorized client public keys (.key)")
    serve.add_argument("--verbose", action="store_true", help="log every error reply to stderr")
    serve.set_defaults(func=_serve)

    check = sub.add_parser("check", help="make, reset and close one env here; bad input: one line, exit 2")
    check.add_argument("--adapters", required=True, help="comma-separated adapters, e.g. libero")
    check.add_argument("--env", required=True, help="the env id, e.g. libero-mem/top-drawer-cue")
    check.add_argument("--kwargs", help="make kwargs as a JSON object")
    check.add_argument("--seed", type=int, default=0, help="the reset seed (default 0)")
    check.add_argument("--replay-dir", help="for the replay adapter")
    check.set_defaults(func=_check)

    from .demos.record import add_parser as add_record_demos

    add_record_demos(sub)
    sub.choices["record-demos"].set_defaults(func=_record_demos)

    table = sub.add_parser("adapters", help="list the adapter table (name, role, module.class, build option)")
    table.add_argument("--json", action="store_true", help="print it as one JSON line {adapters, campaign, chainExecutors}")
    table.set_defaults(func=_adapters)

    keygen = sub.add_parser("curve-keygen", help="create a CurveZMQ key pair (NAME.key, NAME.key_secret)")
    keygen.add_argument("directory")
    keygen.add_argument("--name", default="server")
    keygen.set_defaults(func=_keygen)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr, flush=True)
        return exc.status


if __name__ == "__main__":
    sys.exit(main())
