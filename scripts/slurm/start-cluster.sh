#!/usr/bin/env bash
# A one-node SLURM 22.05 cluster on this machine (the verified recipe in shared/notes/slurm-single-node.md),
# for `imep cluster` and test/cluster/. Idempotent: installs slurm-wlm + munge with apt when missing,
# writes /etc/slurm/slurm.conf from test/cluster/slurm.conf (the template), starts munged, slurmctld and
# slurmd unless they already run, and waits (bounded) for `sinfo` to show the node idle.
# Needs root. Stop it with scripts/slurm/stop-cluster.sh.
#   IMEP_SLURM_DIR   state/log/pid folder (default /tmp/slurmt)
#   IMEP_SLURM_WAIT  seconds to wait for the node to come up idle (default 60)
set -euo pipefail
cd "$(dirname "$0")/../.."
STATE="${IMEP_SLURM_DIR:-/tmp/slurmt}"
WAIT="${IMEP_SLURM_WAIT:-60}"
say() { echo "start-cluster: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  say "needs root (it installs packages and starts munged/slurmctld/slurmd); run it as root or with sudo"
  exit 1
fi

missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- munge ---------------------------------------------------------------------------------------
mkdir -p "$STATE"/{spool,state,log} /etc/slurm /run/munge /var/log/munge /var/lib/munge /etc/munge
if [ ! -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
chmod 400 /etc/munge/munge.key
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if alive /run/munge/munged.pid; then
  :
else
  su -s /bin/sh munge -c /usr/sbin/munged
fi

# --- slurm.conf from the template ----------------------------------------------------------------
H="$(hostname -s)"
CPUS="$(nproc)"
conf="$(sed -e "s|@HOST@|$H|g" -e "s|@CPUS@|$CPUS|g" -e "s|@STATE@|$STATE|g" test/cluster/slurm.conf)"
restart=0
if [ ! -f /etc/slurm/slurm.conf ] || [ "$(cat /etc/slurm/slurm.conf)" != "$conf" ]; then
  printf '%s\n' "$conf" > /etc/slurm/slurm.conf
  restart=1
fi

stop_pid() { if alive "$1"; then kill "$(cat "$1")" 2>/dev/null || true; for _ in $(seq 1 50); do alive "$1" || break; sleep 0.1; done; fi; }
if [ "$restart" -eq 1 ]; then
  stop_pid "$STATE/d.pid"
  stop_pid "$STATE/ctld.pid"
fi
if ! alive "$STATE/ctld.pid"; then
  /usr/sbin/slurmctld
  sleep 2
fi
if ! alive "$STATE/d.pid"; then
  /usr/sbin/slurmd
fi

# --- wait for the node -----------------------------------------------------------------------------
deadline=$((SECONDS + WAIT))
while :; do
  st="$(sinfo -h -n "$H" -o '%t' 2>/dev/null | head -n1 || true)"
  case "$st" in
    idle | mix | alloc) say "node $H is $st (partition debug, $CPUS CPUs)"; exit 0 ;;
    drain* | down* | inval* | fail*)
      # a node left down by an earlier run: return it to service
      scontrol update nodename="$H" state=resume >/dev/null 2>&1 || true ;;
  esac
  if [ "$SECONDS" -ge "$deadline" ]; then
    say "the node $H did not come up idle within ${WAIT}s (sinfo: '${st:-nothing}'); see $STATE/log/ctld.log and $STATE/log/d.log"
    exit 1
  fi
  sleep 1
done
