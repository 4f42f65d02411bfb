#!/usr/bin/env bash
# Stops the one-node test cluster that scripts/slurm/start-cluster.sh started: slurmd, slurmctld, then
# munged, each by its pid file (never by name). Safe to run when nothing runs. Jobs still queued stay in
# the controller's saved state; cancel your own with `scancel JOBID` first if they must not come back.
#   IMEP_SLURM_DIR   the state/log/pid folder start-cluster used (default /tmp/slurmt)
#   IMEP_SLURM_KEEP_MUNGE=1  leave munged running
set -euo pipefail
STATE="${IMEP_SLURM_DIR:-/tmp/slurmt}"
say() { echo "stop-cluster: $*" >&2; }
stop_pid() {
  local name="$1" file="$2"
  if [ -s "$file" ] && kill -0 "$(cat "$file")" 2>/dev/null; then
    local pid
    pid="$(cat "$file")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
    say "stopped $name (pid $pid)"
  fi
}
stop_pid slurmd "$STATE/d.pid"
stop_pid slurmctld "$STATE/ctld.pid"
if [ "${IMEP_SLURM_KEEP_MUNGE:-0}" != "1" ]; then stop_pid munged /run/munge/munged.pid; fi
