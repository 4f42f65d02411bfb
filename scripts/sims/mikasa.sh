#!/usr/bin/env bash
# MIKASA-Robo (ManiSkill 3 + SAPIEN) for IMEP, on CPU, from the registries only.
#   bash scripts/sims/mikasa.sh setup   # venv .venvs/mikasa + Mesa 25 lavapipe; last line IMEP_PYTHON=…
#   bash scripts/sims/mikasa.sh test    # the real-MIKASA pytest files and the small campaign through closeout
#
# Python: Debian's /usr/bin/python3 (3.11; mikasa-robo-suite needs < 3.12). It is the interpreter
# scripts/setup-system.sh provisions on every machine IMEP runs on, so the venv does not depend on a
# developer's pyenv.
#
# Python packages: sim-bridge's extra imep-sim-bridge[mikasa] (pinned run-time needs, torch==2.13.0 CPU), then
# mikasa-robo-suite 1.0.0, mani_skill 3.0.0b15, sapien 3.0.3 and pytorch_kinematics 0.7.4 with --no-deps:
# mikasa-robo-suite pins torch==2.2.1 (GBs of CUDA wheels) and mani_skill pins sapien==3.0.0b1, whose renderer
# finds no usable device on a software Vulkan driver; sapien 3.0.3 renders on Mesa 25's lavapipe.
#
# Renderer: SAPIEN creates a Vulkan render system even for state observations. Debian bookworm's Mesa 22.3
# lavapipe lacks what SAPIEN needs ("failed to find a rendering device"); Mesa 25 from bookworm-backports has it.
# It is not installed system-wide: its two packages (mesa-vulkan-drivers, mesa-libgallium) are downloaded with
# apt-get from the Debian mirror this machine already uses, through a private, temporary apt configuration (no
# sources entry is added: /etc/apt is left as it was), and unpacked into the venv, with a
# Vulkan ICD file the adapter points VK_ICD_FILENAMES at (sim-bridge/imep_sim_bridge/adapters/mikasa_runtime.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
VENV="$ROOT/.venvs/mikasa"
PY="$VENV/bin/python"
MESA_DIR="$VENV/mesa"
ICD="$VENV/share/vulkan/icd.d/imep_lvp_icd.json"
NO_DEPS=(mikasa-robo-suite==1.0.0 mani_skill==3.0.0b15 sapien==3.0.3 pytorch_kinematics==0.7.4)
MESA_PKGS=(mesa-vulkan-drivers mesa-libgallium)
log() { echo "mikasa.sh: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else log "needs root for: $* — run it as root, then rerun"; exit 1; fi
}

apt_install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# apt-get with a private configuration: a sources list naming only bookworm-backports on the Debian mirror this
# machine already uses, and package lists and cache in a temporary folder. Nothing under /etc/apt or /var/lib/apt is
# read for sources or written: the system's apt state stays exactly as it was.
private_apt() {
  local dir="$1"
  shift
  apt-get -o Dir::Etc::SourceList="$dir/backports.list" -o Dir::Etc::SourceParts="$dir/none" \
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o Dir::Cache::pkgcache= \
    -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root "$@"
}

download_backports_mesa() {
  local dir="$1" mirror
  mirror=$(grep -rhs "^URIs:.*/debian/*$" /etc/apt/sources.list.d/*.sources | head -1 | awk '{print $2}')
  [ -n "$mirror" ] || mirror=$(grep -hs "^deb .*/debian/* " /etc/apt/sources.list | sed 's/\[[^]]*\] //' | head -1 | awk '{print $2}')
  if [ -z "$mirror" ]; then
    log "no Debian mirror found in /etc/apt/sources.list* to fetch bookworm-backports' Mesa from; add one and rerun"; exit 1
  fi
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/none" "$dir/debs"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm-backports main" > "$dir/backports.list"
  log "downloading ${MESA_PKGS[*]} from $mirror bookworm-backports (a private apt list in $dir; /etc/apt untouched) …"
  private_apt "$dir" update -qq
  (cd "$dir/debs" && private_apt "$dir" download -qq -t bookworm-backports "${MESA_PKGS[@]}")
}

setup_mesa() {
  if [ -f "$ICD" ] && [ -f "$(sed -n 's/.*"library_path": "\(.*\)".*/\1/p' "$ICD")" ]; then return 0; fi
  local tmp
  tmp=$(mktemp -d)
  download_backports_mesa "$tmp"
  # Their run-time libraries (libLLVM 15, xcb, …) come from bookworm itself: install the missing ones by name.
  local deps
  deps=$(for d in "$tmp"/debs/*.deb; do dpkg-deb -f "$d" Depends; done | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/ //g' | sort -u | grep -v '^$')
  # shellcheck disable=SC2086
  apt_install_missing $deps
  rm -rf "$MESA_DIR" && mkdir -p "$MESA_DIR" "$(dirname "$ICD")"
  for d in "$tmp"/debs/*.deb; do dpkg-deb -x "$d" "$MESA_DIR"; done
  local lib="$MESA_DIR/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"
  [ -f "$lib" ] || { log "Mesa's lavapipe driver is missing after unpacking (expected $lib)"; exit 1; }
  printf '{\n    "file_format_version": "1.0.0",\n    "ICD": { "api_version": "1.4.305", "library_path": "%s" }\n}\n' "$lib" > "$ICD"
  rm -rf "$tmp"
}

setup_python() {
  # The stamp names what was installed; a venv whose stamp matches is left as it is (fast rerun).
  local want
  want=$(cat sim-bridge/pyproject.toml "$0" | sha256sum | cut -c1-16)
  if [ -x "$PY" ] && [ "$(cat "$VENV/.imep-stamp" 2>/dev/null)" = "$want" ]; then return 0; fi
  [ -x "$PY" ] || /usr/bin/python3 -m venv "$VENV"
  "$PY" -m pip install -q --disable-pip-version-check -e "sim-bridge[mikasa]"
  "$PY" -m pip install -q --disable-pip-version-check --no-deps "${NO_DEPS[@]}"
  echo "$want" > "$VENV/.imep-stamp"
}

setup() {
  local t0
  t0=$(date +%s)
  [ -x /usr/bin/python3 ] || { log "Debian's /usr/bin/python3 is missing: bash scripts/setup-system.sh"; exit 1; }
  apt_install_missing python3-venv libvulkan1
  setup_mesa
  setup_python
  log "installed in $(($(date +%s) - t0)) s ($(du -sh "$VENV" | cut -f1) in $VENV)"
  echo "IMEP_PYTHON=$PY"
}

run_tests() {
  [ -x "$PY" ] || { log "no venv at $VENV: run bash scripts/sims/mikasa.sh setup first"; exit 1; }
  local t0
  t0=$(date +%s)
  # (test_demos_mikasa_real.py: 2 demonstrations recorded and read back in LeRobot v3.0 layout; ~30 s)
  # (test_mikasa_vector_real.py: a makeBatch / stepBatch batch in worker processes is one env per slot, byte for byte; ~25 s)
  # (test_onnx_checkpoint.py: the Python checkpoint runner with the venv's onnxruntime, which the bare suite skips)
  # (test_mikasa_vla_tasks_real.py: one VLA task per memory type, frames, lamp and YCB refusals; ~2 min)
  (cd sim-bridge && IMEP_REAL_MIKASA=1 "$PY" -m pytest -q -p no:warnings tests/real/test_mikasa_real.py tests/real/test_mikasa_vector_real.py \
    tests/test_onnx_checkpoint.py tests/test_lerobot_v3.py tests/real/test_demos_mikasa_real.py tests/real/test_mikasa_vla_tasks_real.py)
  # the campaign through closeout, and bad input on the real stack (one line, exit 2, nothing written); the learned
  # policy (in-process ONNX Runtime) and its memoryless twin through closeout; and checkpoints/lite-memvla in process
  # vs hosted by this venv's Python (onnxruntime), rows and steps byte-identical; the learned policy served by
  # unmodified openpi and vla-eval servers from .venvs/policies, its bank in the server (policy-servers-real.test.ts);
  # protocols/suites/mikasa-vla-standard{,-memoryless}.yaml at n = 8 through closeout (suites-real.test.ts, ~3 min)
  IMEP_PYTHON="$PY" IMEP_REAL_MIKASA=1 IMEP_HOSTED_ONNX=1 npx vitest run test/campaign/mikasa-remembercolor.test.ts test/campaign/real-sim-bad-input.test.ts \
    test/campaign/learned-policy-real.test.ts test/e2e/hosted-checkpoint.test.ts test/policies/onnx-checkpoint-parity.test.ts \
    test/campaign/policy-servers-real.test.ts test/campaign/suites-real.test.ts
  log "tests took $(($(date +%s) - t0)) s"
}

case "${1:-}" in
  setup) setup ;;
  test) run_tests ;;
  *) echo "usage: bash scripts/sims/mikasa.sh setup|test" >&2; exit 2 ;;
esac
