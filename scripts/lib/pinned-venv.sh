# shellcheck shell=bash
# One pinned Python venv per requirements file, made the same way by every setup script that sources this
# (scripts/policies/setup.sh, scripts/policies/lerobot.sh, scripts/checkpoints/setup-train.sh):
#
#   pinned_venv LABEL VENV REQS [pip install flags…]
#
# makes VENV with /usr/bin/python3 -m venv and `pip install FLAGS -r REQS` (from PyPI by name; flags such as --no-deps),
# unless the venv's stamp — the SHA-256 of REQS, this file and the calling script — matches (then it is left as it
# is). `pip check` must print exactly REQS's `# pip-check: …` lines (none: a clean check); any other output fails the
# setup with the difference. Prints the install time and the venv's size, or that it was up to date, on stderr.
pinned_venv() {
  local label="$1" venv="$2" reqs="$3"
  shift 3
  local want t0 expected got
  want=$(cat "$reqs" "${BASH_SOURCE[0]}" "$0" | sha256sum | cut -c1-16)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.imep-stamp" 2>/dev/null)" = "$want" ]; then
    echo "$label: $venv is up to date" >&2
    return 0
  fi
  t0=$(date +%s)
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" -r "$reqs" >&2
  expected=$(sed -n 's/^# pip-check: //p' "$reqs" | sort)
  got=$("$venv/bin/python" -m pip check 2>&1 | grep -v '^No broken requirements found\.$' | sort || true)
  if [ "$got" != "$expected" ]; then
    echo "$label: pip check differs from the known lines in $reqs (# pip-check: …):" >&2
    diff <(echo "$expected") <(echo "$got") >&2 || true
    return 1
  fi
  echo "$want" > "$venv/.imep-stamp"
  echo "$label: installed in $(($(date +%s) - t0)) s ($(du -sh "$venv" | cut -f1))" >&2
}
