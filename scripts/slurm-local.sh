#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for iotrial's tests of `iotrial launch slurm`:
#   scripts/slurm-local.sh start DIR   starts munged, slurmctld and slurmd (as root) with the
#                                      config scripts/slurm/slurm.conf.in, everything under DIR;
#                                      prints SLURM_CONF=DIR/slurm.conf once the node is idle
#   scripts/slurm-local.sh stop DIR    stops them (each by the pid it wrote) and waits until
#                                      they are gone
# Clients (sbatch, squeue, scancel) find the cluster through SLURM_CONF. Nothing is installed or
# changed outside DIR: the munge key, socket and seed, Slurm's state and spool, logs and pid
# files all live there. The packages come from scripts/install-deps.sh.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
cmd=$1
dir=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)

# A TCP port nobody listens on.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to $2 seconds for the command $1 to succeed.
wait_for() {
  local what=$1 secs=$2 i
  for ((i = 0; i < secs * 10; i++)); do
    if eval "$what" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

# Stops the daemon whose pid is in file $1 (SIGTERM, then SIGKILL after 20 s).
stop_pid() {
  local file=$1 pid i
  [[ -f $file ]] || return 0
  pid=$(cat "$file")
  rm -f "$file"
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# The step daemons (slurmstepd) of this cluster: they outlive slurmd by design.
stepds() {
  local p
  for p in $(pgrep -x slurmstepd || true); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$dir/slurm.conf"; then
      echo "$p"
    fi
  done
}

stop() {
  export SLURM_CONF=$dir/slurm.conf
  # Cancel every job first (its tasks get SIGTERM, then SIGKILL after KillWait) and wait for
  # the queue to empty, so no job's processes outlive the cluster.
  if [[ -f $dir/slurmctld.pid ]] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    local jobs
    jobs=$(squeue --noheader --format=%A 2>/dev/null || true)
    if [[ -n $jobs ]]; then
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      wait_for "[[ -z \$(squeue --noheader --format=%A 2>/dev/null) ]]" 120 || true
    fi
  fi
  # slurmd, then the controller, then munge.
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  stop_pid "$dir/munge/munged.pid"
  local p left
  for p in $(stepds); do
    kill -KILL "$p" 2>/dev/null || true
  done
  wait_for "[[ -z \$(stepds) ]]" 20 || true
  left=$(stepds)
  if [[ -n $left ]]; then
    echo "slurmstepd still running: $left" >&2
    exit 1
  fi
}

start() {
  for t in munged slurmctld slurmd; do
    command -v "$t" >/dev/null || { echo "$t is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
  done
  mkdir -p "$dir"/{munge,state,spool,log}
  chmod 755 "$dir/munge"
  if [[ ! -f $dir/munge/munge.key ]]; then
    head -c 1024 /dev/urandom >"$dir/munge/munge.key"
    chmod 400 "$dir/munge/munge.key"
  fi
  munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed"
  local host cpus
  host=$(hostname -s)
  cpus=$(nproc)
  sed -e "s|@DIR@|$dir|g" -e "s|@HOST@|$host|g" -e "s|@CPUS@|$cpus|g" \
    -e "s|@CTLD_PORT@|$(free_port)|g" -e "s|@SLURMD_PORT@|$(free_port)|g" \
    "$here/slurm/slurm.conf.in" >"$dir/slurm.conf"
  export SLURM_CONF=$dir/slurm.conf
  # -c: start clean, whatever state a previous cluster in DIR saved.
  slurmctld -c
  slurmd
  if ! wait_for "sinfo --noheader --states=idle --format=%n | grep -qx '$host'" 60; then
    echo "the node did not come up idle; logs in $dir/log:" >&2
    tail -n 20 "$dir"/log/*.log >&2 || true
    stop
    exit 1
  fi
  echo "SLURM_CONF=$dir/slurm.conf"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
