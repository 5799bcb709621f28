#!/usr/bin/env bash
# Run the smoke DAG through a real SLURM scheduler and check it gives the outputs of a local run.
#
#   sudo tests/cluster/run_slurm_smoke.sh            (make test-cluster)
#   TARGETS="results/smoke/simplified_blocks/claims.csv" tests/cluster/run_slurm_smoke.sh   (a part of the DAG)
#
# What it does, in order:
#   1. installs Debian's slurm-wlm and munge (apt-get, needs root) and the Snakemake SLURM executor
#      plugin (pip, into the project's .venv) when they are missing;
#   2. starts a private single-node cluster under a fresh temporary directory: its own munge key and
#      socket, slurmctld and slurmd on 127.0.0.1 (non-default ports), state and logs in that directory.
#      One file outside it: /etc/slurm/slurm.conf becomes a link to the test config while the test runs
#      (srun inside a job finds its config only there; SLURM_CONF does not reach the job step), and is
#      removed at the end. If a slurm.conf is already there, the script stops rather than touch it;
#   3. copies the working tree twice (tracked and untracked, non-ignored files; no results/) and runs
#      the smoke DAG in one copy locally and in the other through `--profile profiles/slurm`;
#   4. compares the two results/ trees (tests/cluster/compare_results.py);
#   5. stops the daemons it started, by their process ids, whatever happened (trap on exit).
# Env: TARGETS (default: the whole smoke DAG), CORES (local run, default 2), KEEP=1 keeps the
# temporary directory, SLURM_PORT_BASE (default 16817: slurmctld on it, slurmd on it + 1).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
PY="$VENV/bin/python"
TARGETS="${TARGETS:-}"
CORES="${CORES:-2}"
PORT="${SLURM_PORT_BASE:-16817}"
PLUGIN="snakemake-executor-plugin-slurm==2.8.0"

log() { printf '[cluster %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { log "FAILED: $*"; exit 1; }

# -- 1. software -------------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    [ "$(id -u)" = 0 ] || die "slurm-wlm and munge are missing and installing them needs root"
    log "installing slurm-wlm and munge (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
if ! "$PY" -c "import snakemake_executor_plugin_slurm" 2>/dev/null; then
    log "installing $PLUGIN into $VENV"
    "$PY" -m pip install -q "$PLUGIN"
fi
[ "$(id -u)" = 0 ] || die "slurmd must run as root to start jobs (run with sudo)"

# -- 2. a private single-node cluster ----------------------------------------------------------
WORK="$(mktemp -d /tmp/repro-cluster.XXXXXX)"
PIDS=()
cleanup() {
    local status=$?
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    [ "${#PIDS[@]}" -gt 0 ] && log "stopped daemons ${PIDS[*]}"
    if [ -n "${LINKED_CONF:-}" ] && [ -L "$LINKED_CONF" ]; then rm -f "$LINKED_CONF"; fi
    if [ "${KEEP:-0}" = 1 ] || [ "$status" != 0 ]; then
        log "kept $WORK (daemon logs in $WORK/log)"
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT INT TERM

mkdir -p "$WORK"/{etc,log,state,spool,munge,run}
chmod 700 "$WORK/munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$WORK/munge/munge.key"
munged --force --key-file="$WORK/munge/munge.key" --socket="$WORK/munge/munge.socket" \
    --pid-file="$WORK/run/munged.pid" --log-file="$WORK/log/munged.log" --seed-file="$WORK/munge/seed" \
    || die "munged did not start (see $WORK/log/munged.log)"
PIDS+=("$(cat "$WORK/run/munged.pid")")

CPUS="$(nproc)"
MEM_MB="$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)"
export SLURM_CONF="$WORK/etc/slurm.conf"
cat >"$SLURM_CONF" <<EOF
# Single-node test cluster written by tests/cluster/run_slurm_smoke.sh; everything on loopback.
ClusterName=repro-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$PORT
# Bind to the configured addresses (127.0.0.1), not to every interface.
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$WORK/munge/munge.socket
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$WORK/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
# No cgroups in a container: track job processes through /proc, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
# Cores are the consumable resource; memory requests are checked against RealMemory only.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Keep finished jobs visible to squeue for an hour: the executor plugin reads job states with
# squeue here, as there is no accounting database for sacct.
MinJobAge=3600
ReturnToService=2
SchedulerType=sched/backfill
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

DEFAULT_CONF=/etc/slurm/slurm.conf
if [ -e "$DEFAULT_CONF" ] || [ -L "$DEFAULT_CONF" ]; then
    die "$DEFAULT_CONF exists: this machine has a SLURM configuration, which this test will not replace"
fi
mkdir -p "$(dirname "$DEFAULT_CONF")"
ln -s "$SLURM_CONF" "$DEFAULT_CONF"
LINKED_CONF="$DEFAULT_CONF"

log "starting slurmctld and slurmd (config $SLURM_CONF)"
slurmctld -D -i -f "$SLURM_CONF" >"$WORK/log/slurmctld.out" 2>&1 &
PIDS+=("$!")
slurmd -D -f "$SLURM_CONF" -N localhost >"$WORK/log/slurmd.out" 2>&1 &
PIDS+=("$!")
for _ in $(seq 60); do
    state="$(sinfo -h -N -o '%T' 2>/dev/null | head -1 || true)"
    [ "$state" = idle ] && break
    sleep 1
done
[ "$state" = idle ] || die "the node did not come up (state '$state'; see $WORK/log)"
log "cluster up: $(sinfo -h -o '%P %D %c %m %T')"

# -- 3. the smoke DAG, locally and through SLURM ---------------------------------------------
copy_tree() {  # the working tree as the user sees it: tracked and untracked, non-ignored files
    mkdir -p "$1"
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - 2>/dev/null) \
        | tar -xf - -C "$1"
}
copy_tree "$WORK/local"
copy_tree "$WORK/slurm"
export PATH="$VENV/bin:$PATH"  # rules call `python -m repro`; sbatch exports this environment to the jobs
# Each run imports the library from its own copy (PYTHONPATH shadows the editable install), so edits
# made to the working tree while the runs go on do not reach them.
SMOKE=(--configfile config/smoke.yaml)
# shellcheck disable=SC2206
EXTRA=($TARGETS)  # targets go first: --configfile takes every word after it

log "local smoke run (${TARGETS:-whole DAG})"
start=$SECONDS
(cd "$WORK/local" && PYTHONPATH="$WORK/local/src" snakemake "${EXTRA[@]}" --workflow-profile profiles/default --cores "$CORES" "${SMOKE[@]}" \
    >"$WORK/log/local.log" 2>&1) || die "local run failed (see $WORK/log/local.log)"
log "local run done in $((SECONDS - start)) s"

log "SLURM smoke run through --profile profiles/slurm"
start=$SECONDS
(cd "$WORK/slurm" && PYTHONPATH="$WORK/slurm/src" snakemake "${EXTRA[@]}" --profile profiles/slurm --workflow-profile none "${SMOKE[@]}" \
    --slurm-no-account --slurm-status-command squeue --slurm-init-seconds-before-status-checks 2 \
    --latency-wait 5 --retries 0 >"$WORK/log/slurm.log" 2>&1) \
    || die "SLURM run failed (see $WORK/log/slurm.log)"
jobs_run="$(squeue -h --states=all -o '%i' | wc -l)"
log "SLURM run done in $((SECONDS - start)) s; $jobs_run SLURM jobs ($(squeue -h --states=all -o '%T' | sort | uniq -c | tr -s ' ' | tr '\n' ';'))"
[ "$jobs_run" -gt 0 ] || die "no job went through SLURM"

# -- 4. compare ------------------------------------------------------------------------------
"$PY" "$ROOT/tests/cluster/compare_results.py" "$WORK/local/results/smoke" "$WORK/slurm/results/smoke" | tee "$WORK/log/compare.txt"
log "outputs of the SLURM run equal the local run's"
