from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import zmq

from imep_sim_bridge import codec
from imep_sim_bridge.__main__ import endpoint_is_local

ROOT = Path(__file__).resolve().parents[1]


def spawn(*args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", "imep_sim_bridge", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "imep_sim_bridge", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)


def hello(endpoint: str, curve: tuple[bytes, bytes, bytes] | None = None, timeout_ms: int = 5000) -> dict | None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    if curve is not None:
        server_public, client_public, client_secret = curve
        sock.curve_serverkey = server_public
        sock.curve_publickey = client_public
        sock.curve_secretkey = client_secret
    sock.connect(endpoint)
    try:
        sock.send(codec.packb({"v": 1, "id": 1, "op": "hello", "body": {"client": {"name": "t", "version": "0"}}}))
        if not sock.poll(timeout_ms, zmq.POLLIN):
            return None
        return codec.unpackb(sock.recv())
    finally:
        sock.close(0)
        ctx.term()


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_serve_prints_endpoint_first_and_stops_on_sigterm(tmp_path: Path, fixtures_dir: Path) -> None:
    endpoint = f"ipc://{tmp_path}/b.sock"
    proc = spawn("serve", "--endpoint", endpoint, "--adapters", "replay,mikasa,simplerenv,libero", "--replay-dir", str(fixtures_dir / "replay"))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == endpoint
        reply = hello(endpoint)
        assert reply is not None and reply["op"] == "reply"
        assert reply["body"]["adapters"] == ["replay", "mikasa", "simplerenv", "libero"]
        assert "replay/tiny" in reply["body"]["envs"] and "mikasa/ShellGameTouch-v0" in reply["body"]["envs"]
    finally:
        rc = stop(proc)
    assert rc == 0, proc.stderr.read() if proc.stderr else ""


def test_default_endpoint_is_private_ipc_and_sigint_stops(fixtures_dir: Path) -> None:
    proc = spawn("serve", "--adapters", "replay", "--replay-dir", str(fixtures_dir / "replay"))
    try:
        assert proc.stdout is not None
        endpoint = proc.stdout.readline().strip()
        assert endpoint.startswith("ipc://") and endpoint.endswith("/bridge.sock")
        directory = Path(endpoint[len("ipc://") :]).parent
        assert (directory.stat().st_mode & 0o777) == 0o700
        assert hello(endpoint) is not None
    finally:
        rc = stop(proc, signal.SIGINT)
    assert rc == 0
    assert not directory.exists()


def test_loopback_tcp_wildcard_port(fixtures_dir: Path) -> None:
    proc = spawn("serve", "--endpoint", "tcp://127.0.0.1:*", "--adapters", "replay", "--replay-dir", str(fixtures_dir / "replay"))
    try:
        assert proc.stdout is not None
        endpoint = proc.stdout.readline().strip()
        assert endpoint.startswith("tcp://127.0.0.1:") and not endpoint.endswith("*")
        assert hello(endpoint) is not None
    finally:
        assert stop(proc) == 0


def test_non_loopback_without_keys_is_refused() -> None:
    res = run("serve", "--endpoint", "tcp://0.0.0.0:0", "--adapters", "mikasa")
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "not loopback" in lines[0] and "--curve-secret-key-file" in lines[0]


def test_non_loopback_with_curve_keys(tmp_path: Path, fixtures_dir: Path) -> None:
    import zmq.auth

    keys = tmp_path / "keys"
    assert run("curve-keygen", str(keys), "--name", "server").returncode == 0
    authorized = tmp_path / "authorized"
    authorized.mkdir()
    client_public_file, client_secret_file = zmq.auth.create_certificates(str(authorized), "client")
    server_public, _ = zmq.auth.load_certificate(str(keys / "server.key"))
    client_public, client_secret = zmq.auth.load_certificate(client_secret_file)

    proc = spawn(
        "serve",
        "--endpoint",
        "tcp://0.0.0.0:*",
        "--adapters",
        "replay",
        "--replay-dir",
        str(fixtures_dir / "replay"),
        "--curve-secret-key-file",
        str(keys / "server.key_secret"),
        "--curve-authorized-keys",
        str(authorized),
    )
    try:
        assert proc.stdout is not None
        endpoint = proc.stdout.readline().strip()
        port = endpoint.rsplit(":", 1)[1]
        local = f"tcp://127.0.0.1:{port}"
        reply = hello(local, (server_public, client_public, client_secret))
        assert reply is not None and reply["op"] == "reply"
        stranger_public, stranger_secret = zmq.curve_keypair()
        assert hello(local, (server_public, stranger_public, stranger_secret), timeout_ms=500) is None
        wrong_server_public, _ = zmq.curve_keypair()
        assert hello(local, (wrong_server_public, client_public, client_secret), timeout_ms=500) is None
        assert hello(local, None, timeout_ms=300) is None  # plaintext is not spoken
    finally:
        assert stop(proc) == 0


@pytest.mark.parametrize(
    "args,needle",
    [
        (("serve", "--adapters", "gazebo"), "unknown adapter(s) gazebo"),
        (("serve", "--adapters", "replay"), "--replay-dir"),
        (("serve", "--adapters", "replay", "--replay-dir", "/nonexistent/dir"), "no such directory"),
        (("serve", "--endpoint", "tcp://0.0.0.0:0", "--curve-secret-key-file", "/nonexistent.key_secret"), "no such file"),
        (("serve", "--endpoint", "nonsense"), "no scheme"),
    ],
)
def test_user_errors_are_one_line(args: tuple[str, ...], needle: str) -> None:
    res = run(*args)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr


@pytest.mark.parametrize(
    "endpoint,local",
    [
        ("ipc:///tmp/x.sock", True),
        ("inproc://x", True),
        ("tcp://127.0.0.1:5555", True),
        ("tcp://127.1.2.3:*", True),
        ("tcp://localhost:5555", True),
        ("tcp://[::1]:5555", True),
        ("tcp://*:5555", False),
        ("tcp://0.0.0.0:5555", False),
        ("tcp://10.0.0.2:5555", False),
        ("tcp://eth0:5555", False),
        ("ws://127.0.0.1:5555", False),
    ],
)
def test_endpoint_is_local(endpoint: str, local: bool) -> None:
    assert endpoint_is_local(endpoint) is local


# The certificate text IMEP's TypeScript side writes (src/bridges/curve-keys.ts formatCurveCertificate).
TS_CERT = """#   ****  Generated by imep  ****
#   ZeroMQ CURVE **Secret** Certificate
#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.

metadata
curve
    public-key = "{public}"
    secret-key = "{secret}"
"""


def _serve_with_secret(secret_file: Path, fixtures_dir: Path, authorized: Path) -> subprocess.CompletedProcess:
    return run(
        "serve",
        "--endpoint",
        "tcp://0.0.0.0:0",
        "--adapters",
        "replay",
        "--replay-dir",
        str(fixtures_dir / "replay"),
        "--curve-secret-key-file",
        str(secret_file),
        "--curve-authorized-keys",
        str(authorized),
    )


def test_curve_certificate_refusals(tmp_path: Path, fixtures_dir: Path) -> None:
    public, secret = zmq.curve_keypair()
    other_public, _ = zmq.curve_keypair()
    authorized = tmp_path / "authorized"
    authorized.mkdir()

    mixed = tmp_path / "mixed.key_secret"
    mixed.write_text(TS_CERT.format(public=other_public.decode(), secret=secret.decode()))
    mixed.chmod(0o600)
    res = _serve_with_secret(mixed, fixtures_dir, authorized)
    assert res.returncode == 2 and "does not belong to public-key" in res.stderr

    open_file = tmp_path / "open.key_secret"
    open_file.write_text(TS_CERT.format(public=public.decode(), secret=secret.decode()))
    open_file.chmod(0o644)
    res = _serve_with_secret(open_file, fixtures_dir, authorized)
    assert res.returncode == 2 and "readable by group or others" in res.stderr

    public_only = tmp_path / "server.key"
    public_only.write_text(f'metadata\ncurve\n    public-key = "{public.decode()}"\n')
    public_only.chmod(0o600)
    res = _serve_with_secret(public_only, fixtures_dir, authorized)
    assert res.returncode == 2 and "holds no secret key" in res.stderr


def test_reads_the_typescript_certificate_text(tmp_path: Path) -> None:
    import zmq.auth

    public, secret = zmq.curve_keypair()
    f = tmp_path / "ts.key_secret"
    f.write_text(TS_CERT.format(public=public.decode(), secret=secret.decode()))
    assert zmq.auth.load_certificate(str(f)) == (public, secret)
