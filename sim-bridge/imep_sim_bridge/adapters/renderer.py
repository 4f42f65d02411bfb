"""Headless MuJoCo renderer, chosen automatically: the first backend of EGL, OSMesa that renders.

MuJoCo reads `MUJOCO_GL` once, when it is first imported, and a backend that fails can leave the
process unusable (a half-loaded GL library), so each candidate is tried in a child process that
renders one 16×16 frame of a red box and checks the pixels it reads back. The first that works is
set in this process's environment before MuJoCo (robosuite, LIBERO) is imported here.

A backend the user chose (`MUJOCO_GL` already set) is the only candidate: it is checked, never
replaced. EGL is tried first because it is the fast path on machines with a GPU. When the EGL that
renders is a software rasterizer (Mesa's llvmpipe/softpipe, GL_RENDERER as the probe reads it) OSMesa
is tried too and preferred if it renders: on this project's 2-core CPU machines OSMesa (Debian
`libosmesa6`) stepped LIBERO with 128×128 frames at 4.2 steps/s against EGL-llvmpipe's 2.7, with the
same pixels, and Mesa's EGL raises at interpreter exit (`GLContext.__del__`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

from ..errors import RendererUnavailable

CANDIDATES = ("egl", "osmesa")
PROBE_TIMEOUT_S = 60.0
INSTALL_HINT = (
    "apt-get install libosmesa6 (OSMesa, software rendering) or libegl1 libegl-mesa0 with a GPU driver (EGL); "
    "or `bash scripts/setup-sims.sh libero`, which installs them"
)

#: Renders one frame of a red box and prints "ok <max red> <max green>" (the box must be red).
_PROBE = """
import mujoco
xml = '<mujoco><worldbody><light pos="0 0 2"/><geom type="box" size=".2 .2 .2" rgba="1 0 0 1"/></worldbody></mujoco>'
m = mujoco.MjModel.from_xml_string(xml)
d = mujoco.MjData(m)
mujoco.mj_forward(m, d)
r = mujoco.Renderer(m, 16, 16)
r.update_scene(d)
img = r.render()
try:
    from OpenGL import GL
    name = GL.glGetString(GL.GL_RENDERER).decode("utf-8", "replace").replace(" ", "_")
except Exception:
    name = "unknown"
print("ok", int(img[..., 0].max()), int(img[..., 1].max()), name, flush=True)
"""
SOFTWARE = ("llvmpipe", "softpipe", "swrast")


@dataclass(frozen=True)
class Renderer:
    backend: str  # the MUJOCO_GL value
    chosen_by: str  # "user" (MUJOCO_GL was set) or "probe"
    gl_renderer: str  # GL_RENDERER of the probe's context (e.g. "llvmpipe_(LLVM_15.0.6,_256_bits)")


_chosen: Renderer | None = None


def backend_env(backend: str) -> dict[str, str]:
    """The environment variables that select `backend` for MuJoCo and PyOpenGL."""
    out = {"MUJOCO_GL": backend}
    if backend in ("egl", "osmesa"):
        out["PYOPENGL_PLATFORM"] = backend
    return out


def probe(backend: str, python: str = sys.executable) -> tuple[str | None, str]:
    """(None, GL_RENDERER) when `backend` renders a red frame in a child process, else (a one-line reason, "")."""
    env = {**os.environ, **backend_env(backend)}
    try:
        done = subprocess.run([python, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return f"{backend}: no frame within {PROBE_TIMEOUT_S:.0f} s", ""
    words = done.stdout.split()
    if len(words) == 4 and words[0] == "ok":  # the frame was read back (an error at exit does not matter)
        red, green = int(words[1]), int(words[2])
        if red > 100 and green < red:
            return None, words[3]
        return f"{backend}: rendered, but the pixels read back are wrong (max red {red}, max green {green})", ""
    last = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return f"{backend}: {last[-1].strip() if last else f'exit status {done.returncode}'}", ""


def current() -> Renderer | None:
    """The renderer chosen in this process, or None before the first `choose`."""
    return _chosen


def choose(adapter: str) -> Renderer:
    """The renderer for this process (probed once), set in os.environ; SimUnavailable naming what to install."""
    global _chosen
    if _chosen is not None:
        return _chosen
    user = os.environ.get("MUJOCO_GL")
    candidates = (user,) if user else CANDIDATES
    reasons = []
    works: list[Renderer] = []
    for backend in candidates:
        reason, gl_renderer = probe(backend)
        if reason is not None:
            reasons.append(reason)
            continue
        works.append(Renderer(backend, "user" if user else "probe", gl_renderer))
        if not any(word in gl_renderer.lower() for word in SOFTWARE):
            break  # a hardware EGL: take it
    if works:
        _chosen = works[-1] if works[-1].backend == "osmesa" else works[0]
        os.environ.update(backend_env(_chosen.backend))
        return _chosen
    tried = "; ".join(reasons)
    if user:
        problem = f"MUJOCO_GL={user} was set and does not render ({tried}); unset it to let the adapter choose, or {INSTALL_HINT}"
    else:
        problem = f"none of {', '.join(CANDIDATES)} renders ({tried}); {INSTALL_HINT}"
    raise RendererUnavailable(adapter, problem)


def describe(adapter: str) -> dict[str, str]:
    """The renderer as a run record keeps it: {MUJOCO_GL, chosenBy, glRenderer}, or {error} when none works."""
    try:
        r = choose(adapter)
    except RendererUnavailable as exc:
        return {"error": exc.message}
    return {"MUJOCO_GL": r.backend, "chosenBy": r.chosen_by, "glRenderer": r.gl_renderer}
