# shellcheck shell=bash
# What a long setup step is doing, while it does it (issue #35: `pip -q` ran for minutes without a word):
#
#   with_progress LABEL CMD…
#
# runs CMD with its output as it is, and on stderr prints
#   LABEL: starting (~3m20s last time) …
#   LABEL: 0m45s — pip step 2: pip install --no-deps mikasa-robo-suite==1.0.0 mani_skill==3.0.0b15 … (~3m20s last time, ETA ~2m35s)
# every IMEP_SETUP_HEARTBEAT_S seconds (default 15) — the pip command running under CMD right now, read from the process
# table, numbered as they come — and at the end
#   LABEL: done in 3m12s   (or: LABEL: failed after 0m12s (exit 1))
# The time of the last successful run is kept in .venvs/.setup-times (git-ignored; LABEL<TAB>seconds) for the next
# "last time".
# It does not touch what CMD installs: the scripts it wraps (scripts/sims/*.sh, scripts/lib/pinned-venv.sh) hash their
# own text into their venvs' stamps, so they are left byte for byte as they were.

_sp_fmt() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# the descendants of pid $1, one per line
_sp_descendants() {
  local kids k
  kids=$(ps -o pid= --ppid "$1" 2>/dev/null || true)
  for k in $kids; do
    echo "$k"
    _sp_descendants "$k"
  done
}

# the first `pip install …` command line under pid $1 (shortened), or nothing
_sp_pip_of() {
  local p args
  for p in $(_sp_descendants "$1"); do
    args=$(ps -o args= -p "$p" 2>/dev/null || true)
    case "$args" in
      *" -m pip "*|*"/pip "*|*"/pip3 "*)
        args=${args#*-m pip }
        args=$(echo "$args" | sed -E 's/ (-q|--quiet|--disable-pip-version-check)//g; s#/[^ ]*/(sim-bridge|scripts)/#\1/#g')
        [ "${#args}" -gt 110 ] && args="${args:0:107}…"
        echo "pip $args"
        return 0
        ;;
    esac
  done
}

with_progress() {
  local label="$1"
  shift
  local times="${IMEP_SETUP_TIMES:-$PWD/.venvs/.setup-times}"
  local every="${IMEP_SETUP_HEARTBEAT_S:-15}"
  local last="" t0 now el pid rc step=0 seen="" cur eta
  last=$(awk -F'\t' -v k="$label" '$1 == k { v = $2 } END { if (v != "") print v }' "$times" 2>/dev/null || true)
  echo "$label: starting${last:+ (~$(_sp_fmt "$last") last time)} …" >&2
  t0=$(date +%s)
  "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    # sleep in 1 s ticks so a quick command ends the wait at once
    for _ in $(seq "$every"); do
      kill -0 "$pid" 2>/dev/null || break 2
      sleep 1
    done
    now=$(date +%s)
    el=$((now - t0))
    cur=$(_sp_pip_of "$pid")
    if [ -n "$cur" ] && [ "$cur" != "$seen" ]; then
      step=$((step + 1))
      seen="$cur"
    fi
    eta=""
    if [ -n "$last" ]; then
      if [ "$el" -lt "$last" ]; then eta=", ETA ~$(_sp_fmt $((last - el)))"; else eta=", past last time's $(_sp_fmt "$last")"; fi
    fi
    echo "$label: $(_sp_fmt "$el")${cur:+ — pip step $step: ${cur}}${last:+ (~$(_sp_fmt "$last") last time$eta)}" >&2
  done
  rc=0
  wait "$pid" || rc=$?
  el=$(($(date +%s) - t0))
  if [ "$rc" -eq 0 ]; then
    echo "$label: done in $(_sp_fmt "$el")" >&2
    mkdir -p "$(dirname "$times")"
    { awk -F'\t' -v k="$label" '$1 != k' "$times" 2>/dev/null || true; printf '%s\t%s\n' "$label" "$el"; } >"$times.tmp" &&
      mv "$times.tmp" "$times"
  else
    echo "$label: failed after $(_sp_fmt "$el") (exit $rc)" >&2
  fi
  return "$rc"
}
