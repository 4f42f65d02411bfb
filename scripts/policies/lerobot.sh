#!/usr/bin/env bash
# LeRobot's policies (scripts/policies/lerobot-requirements.txt) in .venvs/lerobot, from PyPI by name, pinned,
# --no-deps (the file is the closure of what the policy modules import): lerobot 0.4.4, torch 2.13.0 (CPU, on this
# machine's disk), torchvision 0.28.0, and pyzmq + msgpack + numpy for IMEP's policy host. `pip check` must print
# exactly the file's `# pip-check:` lines (lerobot's caps below torch 2.13 and the packages no policy module imports).
# Used by sim-bridge/tests/test_lerobot_policy.py, test/campaign/lerobot-policy.test.ts and docs/lerobot.md.
# ~1.5 GB, ~2 min here. A venv whose stamp matches is left as it is. Last line: LEROBOT_PYTHON=<abs path>.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="$PWD/.venvs/lerobot"
reqs="$PWD/scripts/policies/lerobot-requirements.txt"
want=$(cat "$reqs" "$0" | sha256sum | cut -c1-16)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.imep-stamp" 2>/dev/null)" = "$want" ]; then
  echo "setup-lerobot: $venv is up to date" >&2
else
  t0=$(date +%s)
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$reqs" >&2
  expected=$(sed -n 's/^# pip-check: //p' "$reqs" | sort)
  got=$("$venv/bin/python" -m pip check 2>&1 | sort || true)
  if [ "$got" != "$expected" ]; then
    echo "setup-lerobot: pip check differs from the known lines in $reqs:" >&2
    diff <(echo "$expected") <(echo "$got") >&2 || true
    exit 1
  fi
  echo "$want" > "$venv/.imep-stamp"
  echo "setup-lerobot: installed in $(($(date +%s) - t0)) s ($(du -sh "$venv" | cut -f1))" >&2
fi
echo "LEROBOT_PYTHON=$venv/bin/python"
