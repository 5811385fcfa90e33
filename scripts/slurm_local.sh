#!/usr/bin/env bash
# A one-node Slurm on this machine for trying fleet runs and for their tests (issue 33): munge, slurmctld and
# slurmd with this machine's cores, from Debian's packages (slurm-wlm 22.05 on Debian 12), as root.
# Usage: scripts/slurm_local.sh start|stop|status
#   start   installs what is missing, writes /etc/slurm/slurm.conf for this host (one partition, `local`, of
#           one node with all its cores; and `spread`, this node and one that never comes up) and starts the
#           daemons; waits until the node takes jobs.
#   stop    stops the daemons (the configuration and state stay).
#   status  sinfo's view of the node.
# No accounting database: sacct needs slurmdbd and a MariaDB server; finished jobs are kept by slurmctld
# for SLURM_LOCAL_JOB_AGE seconds (default a day), where `scontrol show job` and squeue still see them.
set -euo pipefail

state=/var/spool/slurmctld
spool=/var/spool/slurmd
conf=/etc/slurm/slurm.conf
host=$(hostname -s)

install() {
  local missing=()
  for p in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  echo "slurm_local: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
}

write_conf() {
  local cpus memory
  cpus=$(nproc)
  memory=$(($(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 * 9 / 10))
  mkdir -p /etc/slurm "$state" "$spool" /var/log/slurm
  # linuxproc and task/none: a container has no cgroup hierarchy of its own for Slurm to manage.
  cat > "$conf" <<EOF
ClusterName=varex-local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MinJobAge=${SLURM_LOCAL_JOB_AGE:-86400}
StateSaveLocation=$state
SlurmdSpoolDir=$spool
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
# A node that is declared but never up, and a partition that spans it and this host: a cluster of more than
# one host as varex fleet sees it, where a directory on this host's own disk is refused as not shared.
NodeName=elsewhere CPUs=1 State=FUTURE
PartitionName=spread Nodes=$host,elsewhere MaxTime=INFINITE State=UP
EOF
}

start() {
  install
  write_conf
  if ! pgrep -x munged >/dev/null; then
    [ -s /etc/munge/munge.key ] || { mkdir -p /etc/munge && dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null; }
    chown munge:munge /etc/munge/munge.key 2>/dev/null || true
    chmod 400 /etc/munge/munge.key
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
    runuser -u munge -- munged 2>/dev/null || munged --force
  fi
  pgrep -x slurmctld >/dev/null || slurmctld
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 60); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
      sinfo
      return 0
    fi
    sleep 1
  done
  echo "slurm_local: the node did not come up in 60 s; see /var/log/slurm/" >&2
  sinfo -N -l >&2 || true
  exit 1
}

# Waits up to 10 s for the named daemons to exit, then kills what is left.
wait_gone() {
  for _ in $(seq 20); do
    pgrep -x "$1" >/dev/null || return 0
    sleep 0.5
  done
  pkill -9 -x "$1" || true
}

stop() {
  # slurmctld and slurmd shut down through slurmctld (they wait on munge, so munged goes last).
  scontrol shutdown >/dev/null 2>&1 || true
  for daemon in slurmd slurmctld munged; do
    pkill -x "$daemon" || true
    wait_gone "$daemon"
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) sinfo -N -l ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
