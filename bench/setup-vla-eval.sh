#!/usr/bin/env bash
# vla-eval (allenai/vla-evaluation-harness, PyPI `vla-eval`) next to IMEP's simulator stacks, for the comparison
# benches (bench/libero_vs_vla_eval.py, bench/mikasa_vs_vla_eval.py). From PyPI by name only, everything pinned:
#   bash bench/setup-vla-eval.sh libero   # .venvs/vla-eval-libero: LIBERO's stack as scripts/sims/libero.sh pins it
#   bash bench/setup-vla-eval.sh mikasa   # .venvs/vla-eval-mikasa: MIKASA's stack as scripts/sims/mikasa.sh pins it
# Each venv is a separate copy (no --system-site-packages, nothing shared with .venvs/libero or .venvs/mikasa):
# the simulator stack is installed exactly as its sims script installs it (sim-bridge's extra with the same
# constraints / --no-deps pins), then imep-sim-bridge itself is uninstalled again (the benches and IMEP put the
# repo's sim-bridge/ on PYTHONPATH), then bench/vla-eval/requirements.txt (vla-eval 0.8.0 and its run-time needs,
# pinned) with --no-deps. MIKASA's Mesa 25 lavapipe (downloaded from Debian by scripts/sims/mikasa.sh) is copied
# from .venvs/mikasa: run `bash scripts/sims/mikasa.sh setup` first. Prints the install time and the venv size;
# the last line is VLA_EVAL_PYTHON=<abs path>. A venv whose stamp matches is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
reqs="$root/bench/vla-eval/requirements.txt"
log() { echo "setup-vla-eval: $*" >&2; }
pip_q() { "$1/bin/python" -m pip install -q --disable-pip-version-check "${@:2}" >&2; }

# what the venv was made from, and where (stdin: its path)
stamp() { cat "$root/bench/setup-vla-eval.sh" "$reqs" "$root/sim-bridge/pyproject.toml" "$@" - | sha256sum | cut -c1-16; }

libero_stack() {
  local venv="$1"
  pip_q "$venv" -c "$root/scripts/sims/libero-constraints.txt" -e "$root/sim-bridge[libero]"
  # as scripts/sims/libero.sh: robosuite's private macro file, LIBERO's path config inside the venv
  "$venv/bin/python" -c "import os, shutil, robosuite; d = os.path.dirname(robosuite.__file__); shutil.copyfile(os.path.join(d, 'macros.py'), os.path.join(d, 'macros_private.py'))" 2>/dev/null
  mkdir -p "$venv/libero-config"
  LIBERO_CONFIG_PATH="$venv/libero-config" "$venv/bin/python" -c \
    "from libero.libero import set_libero_default_path; set_libero_default_path()"
}

mikasa_stack() {
  local venv="$1" src="$root/.venvs/mikasa" no_deps
  [ -d "$src/mesa" ] || { log "no Mesa lavapipe in $src/mesa: run bash scripts/sims/mikasa.sh setup first"; exit 2; }
  # the --no-deps pins, read from scripts/sims/mikasa.sh so the two cannot drift apart
  no_deps=$(sed -n 's/^NO_DEPS=(\(.*\))$/\1/p' "$root/scripts/sims/mikasa.sh")
  [ -n "$no_deps" ] || { log "scripts/sims/mikasa.sh has no NO_DEPS=(…) line to read the pins from"; exit 2; }
  pip_q "$venv" -e "$root/sim-bridge[mikasa]"
  # shellcheck disable=SC2086
  pip_q "$venv" --no-deps $no_deps
  cp -a "$src/mesa" "$venv/mesa"
  local lib="$venv/mesa/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"
  mkdir -p "$venv/share/vulkan/icd.d"
  printf '{\n    "file_format_version": "1.0.0",\n    "ICD": { "api_version": "1.4.305", "library_path": "%s" }\n}\n' "$lib" \
    >"$venv/share/vulkan/icd.d/imep_lvp_icd.json"
}

setup() {
  local sim="$1" venvs venv want t0
  # the physical path: LIBERO's config and pip's console scripts record it, so a venv reached through a symlinked
  # .venvs (a git worktree sharing another checkout's) must not record a path that goes away with the worktree
  venvs=$(mkdir -p "$root/.venvs" && cd "$root/.venvs" && pwd -P)
  venv="$venvs/vla-eval-$sim"
  case "$sim" in
    libero) want=$(stamp "$root/scripts/sims/libero-constraints.txt" <<<"$venv") ;;
    mikasa) want=$(stamp "$root/scripts/sims/mikasa.sh" <<<"$venv") ;;
  esac
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.imep-stamp" 2>/dev/null)" = "$want" ]; then
    log "$venv is up to date"
  else
    t0=$(date +%s)
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    # a half-made venv is removed, not left behind looking usable
    trap 'rm -rf "$venv"' ERR
    "${sim}_stack" "$venv"
    "$venv/bin/python" -m pip uninstall -q -y imep-sim-bridge >&2
    pip_q "$venv" --no-deps -r "$reqs"
    trap - ERR
    echo "$want" >"$venv/.imep-stamp"
    log "$sim: installed in $(($(date +%s) - t0)) s; venv size $(du -sh "$venv" | cut -f1) ($(du -sh "$venv/lib/python3.11/site-packages/vla_eval" | cut -f1) of it vla-eval's own package)"
  fi
  echo "VLA_EVAL_PYTHON=$venv/bin/python"
}

case "${1:-}" in
  libero | mikasa) setup "$1" ;;
  *) echo "usage: bash bench/setup-vla-eval.sh libero|mikasa" >&2; exit 2 ;;
esac
