#!/usr/bin/env bash
# same_results.sh: prove that two gputwin builds give identical results.
#
#   scripts/same_results.sh OLD_BINARY NEW_BINARY [--quick] [--only NAME] [--verbose] [--keep] [--list]
#
# For every case (a scenario file plus optional --seed / --set arguments) both binaries run the same command
# (same scenario path, so runs.scenario_file matches) into /tmp/same-results/<case>/{old,new} (or
# $SAME_RESULTS_WORK/<case>/...), then:
#   - jobs.csv must be byte-for-byte identical (cmp);
#   - results.sqlite: the schema (sqlite_master) and every table present in either database, dumped with
#     SELECT * ... ORDER BY rowid (primary key for WITHOUT ROWID tables such as gpu_metrics), must be identical,
#     except the wall clock: the runs table's wall_time_s column and summary rows whose key mentions "wall"
#     (no such summary key exists today; wall_time_s is the only wall-clock value the results hold);
#   - summary.json must be identical after removing keys that mention "wall" (wall_time_s).
# Dumps use sqlite3's quote mode, not list mode: list mode prints REALs with 15 significant digits
# (0.1+0.2 prints 0.3) and would hide last-bit differences; quote mode prints them exactly (%!.20g).
#
# Prints one line per case, "same  <case>" or "DIFF  <case>: <what> ...", followed for a DIFF by a few indented
# lines (first differing line of each differing item, old and new). Exit status 1 if any case differs or fails
# to run, 2 on bad usage. The two binaries of a case run at the same time (2 cores), and so do their dumps;
# cases run one after the other. A case's folder is removed when it is the same (kept with --keep) and kept
# when it differs.
#
#   --quick      leave out the bench-1m* scenarios (1,000,000 jobs each)
#   --only NAME  run only the case NAME (may be given several times)
#   --verbose    print the commands run for each case
#   --keep       keep the output folders of identical cases too
#   --list       list the cases and exit
set -euo pipefail

usage() {
  sed -n '3,4p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# SAME_RESULTS_WORK moves the work folder, so two comparisons (two worktrees) can run at once.
WORK=${SAME_RESULTS_WORK:-/tmp/same-results}

OLD='' NEW='' QUICK=0 VERBOSE=0 KEEP=0 LIST=0
ONLY=()
positional=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) QUICK=1 ;;
    --verbose) VERBOSE=1 ;;
    --keep) KEEP=1 ;;
    --list) LIST=1 ;;
    --only) [[ $# -ge 2 ]] || usage; ONLY+=("$2"); shift ;;
    --only=*) ONLY+=("${1#--only=}") ;;
    -h|--help) usage ;;
    -*) echo "same_results.sh: unknown option $1" >&2; usage ;;
    *) positional+=("$1") ;;
  esac
  shift
done
if [[ $LIST -eq 0 ]]; then
  [[ ${#positional[@]} -eq 2 ]] || usage
  OLD=$(realpath "${positional[0]}")
  NEW=$(realpath "${positional[1]}")
  for b in "$OLD" "$NEW"; do
    [[ -x $b ]] || { echo "same_results.sh: $b is not an executable" >&2; exit 2; }
  done
fi
command -v sqlite3 >/dev/null || { echo "same_results.sh: sqlite3 not found" >&2; exit 2; }
# The system python3 when there is one: a pyenv shim takes about a second to start.
PYTHON=python3
[[ -x /usr/bin/python3 ]] && PYTHON=/usr/bin/python3
command -v "$PYTHON" >/dev/null || { echo "same_results.sh: python3 not found" >&2; exit 2; }

# ---------------------------------------------------------------------------------------------------------------
# Cases. CASES holds one definition per case: name, scenario and the extra arguments, joined by \x1f (add()
# builds them, so JSON values keep their quotes and spaces). Scenario paths are relative to the repository.
# Times in the comments are one baseline run on this 2-core machine (run only, without the comparison).
CASES=()
SEP=$'\x1f'
add() {
  local def=$1
  shift
  for a in "$@"; do def+=$SEP$a; done
  CASES+=("$def")
}

# Every scenario file at its own seed. bench-1m* (1,000,000 jobs) only without --quick: measured 43 s / 0.55 GB
# (bench-1m), 54 s / 0.56 GB (-faults), 53 s / 0.53 GB (-multifactor), 128 s / 0.60 GB (-topology) with results,
# all under 3 minutes and 5 GB, so they are compared at their full job count (to reduce one, add
# --set /workload/synthetic/jobs=200000).
for f in "$ROOT"/scenarios/*.json; do
  name=$(basename "$f" .json)
  [[ $QUICK -eq 1 && $name == bench-1m* ]] && continue
  add "$name" "scenarios/$name.json"
done

# Variants: features no scenario file turns on, as --set overrides on small scenarios.
add quickstart-seed7 scenarios/quickstart.json --seed 7  # 1.8 s: another seed, with GPU metrics

# Classic policies (every scenario file uses slurm). Quickstart's synthetic GPU day at load 1.3: 0.3 s each. The real
# HPC2N trace (3,145 jobs) on its machine, 120 nodes x 2 CPUs: 0.4-1.0 s; on 64 such nodes, overloaded (mean wait
# 2.5 days under fcfs): 0.5 s for fcfs and easy (conservative takes 14 s there, so it is left out).
NOMETRICS='/metrics={"enabled":false}'
HPC2N=(--set '/cluster/partitions=[{"name":"batch","nodes":"ALL","default":true}]'
  --set '/workload={"trace":{"path":"../../shared/traces/hpc2n-subset.swf"}}' --set "$NOMETRICS")
for p in fcfs sjf easy conservative; do
  add "classic-$p-quickstart" scenarios/quickstart.json --set "/scheduler/policy=$p" --set "$NOMETRICS" \
    --set /workload/synthetic/load=1.3
  add "classic-$p-hpc2n" scenarios/quickstart.json --set "/scheduler/policy=$p" "${HPC2N[@]}" \
    --set '/cluster/nodes=[{"prefix":"n","count":120,"cpus":2}]'
done
for p in fcfs easy; do
  add "classic-$p-hpc2n-loaded" scenarios/quickstart.json --set "/scheduler/policy=$p" "${HPC2N[@]}" \
    --set '/cluster/nodes=[{"prefix":"n","count":64,"cpus":2}]'
done

# The slurm policy on long queues (issue 16). On the HPC2N machine shrunk to 64 nodes x 2 CPUs (floating CPU requests on
# multi-CPU nodes), and the 3,000-job loaded replay of BENCHMARKS.md (HPC2N tiled, arrivals 8x faster, 256 single-CPU
# nodes; the trace is made here once): before issue 16 about 100 s of CPU, after it about 2 s.
add slurm-hpc2n-loaded scenarios/quickstart.json --set /scheduler/policy=slurm "${HPC2N[@]}" \
  --set '/cluster/nodes=[{"prefix":"n","count":64,"cpus":2}]'
LOADED3K=${SAME_RESULTS_TRACES:-/tmp/gputwin-bench}/loaded-3k.swf
if [[ $LIST -eq 0 && ! -f $LOADED3K ]]; then
  mkdir -p "$(dirname "$LOADED3K")"
  "$PYTHON" "$ROOT/bench/make_loaded_swf.py" "$ROOT/../shared/traces/hpc2n-subset.swf" "$LOADED3K" --jobs 3000 \
    --compress 8 >/dev/null
fi
add slurm-loaded-3k bench/loaded-10k-easy-textbook.json --set /scheduler/policy=slurm \
  --set "/workload/trace/path=$LOADED3K"

# Faults. F: health-check-interval.json shrunk to 64 nodes and 3,000 jobs at 50x Llama 3 rates
# (HealthCheckInterval 120 ANY,CYCLE, SlurmdTimeout 300, Daly checkpoints >= 64 GPUs): 0.13 s,
# 116 faults (8 suppressed), 66 interruptions (41 black holes), node_events DRAINED 88, DOWN 23, REBOOTING 31.
HCI=scenarios/health-check-interval.json
F0=(--set /cluster/nodes/0/count=64 --set /workload/synthetic/jobs=3000)
F=("${F0[@]}" --set /faults/rate_scale=50)
add f-base "$HCI" "${F[@]}"
# 0.14 s: 27 interruptions instead of 66, 3 black holes instead of 41, DRAINING 3.
add f-epilog-check "$HCI" "${F[@]}" --set /faults/epilog_check=true
# 0.15 s: 32 interruptions, 1 black hole, DRAINING 8 (prolog finds the fault, starting job NODE_FAIL + requeue).
add f-prolog-check "$HCI" "${F[@]}" --set /faults/prolog_check=true
# With F alone requeue_on_detection changes no result (F has a single DRAINING); with an hourly dcgm_diag_3 active
# check (it sees degraded GPUs while jobs run) it does:
# 0.26 s, 488 faults, 55 interruptions (7 found by the active check); with requeue_on_detection 62 interruptions.
AC='/faults/active_checks=[{"checks":["dcgm_diag_3"],"period":"01:00:00","phase":600}]'
add f-active-checks "$HCI" "${F[@]}" --set "$AC"
add f-requeue-on-detection "$HCI" "${F[@]}" --set "$AC" --set /faults/requeue_on_detection=true
# 0.14 s: DOWN 1, FAIL 23, FAILING 1 instead of DOWN 23.
add f-repair-fail "$HCI" "${F[@]}" --set '/faults/repair={"node_state":"FAIL"}'
# Injected faults only (rate_scale 0): XID 79 on GPU 2, reboot_node/host_down twice, XID 48, repair_node/silent
# (found by people a day later), reset_gpu/hang with its own cause and an XID 79 on the same node 60 s later
# (a second fault during the recovery), XID 119: 0.29 s, 8 faults (detected by health_check, slurmd_timeout,
# people), 14 interruptions, DOWN 3, REBOOTING 4.
INJ='/faults/inject=[{"time":3600,"node":"gpu001","xid":79,"gpu":2},{"time":"02:00:00","node":"gpu002","effect":"reboot_node","symptom":"host_down"},{"time":10800,"node":"gpu003","xid":48,"gpu":0},{"time":14400,"node":"gpu004","effect":"repair_node","symptom":"silent"},{"time":18000,"node":"gpu005","effect":"reset_gpu","symptom":"hang","cause":"nccl"},{"time":18060,"node":"gpu005","xid":79,"gpu":1},{"time":21600,"node":"gpu006","effect":"reboot_node","symptom":"host_down"},{"time":25200,"node":"gpu007","xid":119,"gpu":3}]'
add f-inject "$HCI" "${F0[@]}" --set /faults/rate_scale=0 --set "$INJ"
# ReturnToService=0 needs a node DOWN for not responding that only needs a reboot (host_down + reboot_node: the
# injected gpu002 and gpu006); none of F's faults is one (with F alone RTS 0 changes no result):
# 0.18 s, gpu002/gpu006 return at 94604/109004 s instead of 8204/22604 s (admin resume), DOWN 5, 20 interruptions.
add f-inject-rts0 "$HCI" "${F0[@]}" --set /faults/rate_scale=0 --set "$INJ" --set /faults/ReturnToService=0
# Weibull clocks, shape 0.7, new components (infant mortality): 0.6 s, 5,318 faults (612 suppressed),
# 257 interruptions, DOWN 1,458, DRAINED 4,469, REBOOTING 1,603, makespan 368 days (stationary start: 431 faults).
add f-weibull "$HCI" "${F[@]}" --set /faults/distribution=weibull --set /faults/weibull_shape=0.7 \
  --set /faults/weibull_start=new
# 0.58 s: 5% lemons at 5x, fleet rate not preserved: 1,698 faults (182 suppressed), 70 interruptions.
add f-lemons "$HCI" "${F[@]}" --set '/faults/lemons={"fraction":0.05,"rate_multiplier":5,"preserve_fleet_rate":false}'
# 0.13 s: 115 faults, 26 interruptions, 1 requeue (FAILED runs not restarted).
add f-no-restart-failed "$HCI" "${F[@]}" --set /faults/restart_failed_jobs=false
# 0.12 s: 26 interruptions, 19 requeues (at most one restart per job).
add f-max-restarts-1 "$HCI" "${F[@]}" --set /faults/max_restarts=1
# 100x rates, half the repairs escalated to manual, 1 h automated repairs: 0.65 s, 9,467 faults (943 suppressed:
# faults on nodes already out), 745 faults out for more than a day, 118 interruptions, makespan 427 days.
# (At 300x faults outpace the work: the baseline grew to 22 GB and was killed by the OOM killer.)
add f-heavy "$HCI" "${F0[@]}" --set /faults/rate_scale=100 --set '/faults/repair={"p_manual":0.5,"auto_repair_s":3600}'
# One 2,048-GPU job at 20x Llama 3 rates, Daly interval, asynchronous checkpoints: 0.25 s, 105 faults,
# 101 interruptions, the job FAILED after max_restarts (100) requeues, DRAINING 11.
add f-llama3-heavy scenarios/llama3-goodput.json --set /faults/rate_scale=20 \
  --set /faults/checkpoint/0/interval=daly --set /faults/checkpoint/0/async=true
# GPU metrics under faults on quickstart: two merged profiles, racks of 4, switches of 8, two lemon nodes,
# Young checkpoints, HealthCheckInterval 300, metrics every 120 s: 2.2 s, 28 faults, 36 interruptions
# (22 black holes), 936,648 gpu_metrics rows (29,109 with an XID), cluster_metrics nodes_down up to 3.
add f-metrics scenarios/quickstart.json \
  --set '/faults={"profile":["llama3","alibaba-hpn"],"rate_scale":40,"HealthCheckInterval":300,"nodes_per_rack":4,"nodes_per_switch":8,"lemons":{"nodes":"gpu[001-002]","rate_multiplier":5},"checkpoint":[{"min_gpus":16,"interval":"young","write_s":60,"restart_s":300}]}' \
  --set '/metrics={"interval_s":120}'

# Cloud.
# Operations at once on a static cluster with running jobs (quickstart, metrics on): update_image; add_nodes
# gpu[029-032] (absent until 15000 s, 300 s cold start); attach_volume and restart_workers at once (32 + 32 node
# restarts, jobs NODE_FAIL + requeue); a 2 h maintenance of gpu[001-004]; remove_nodes gpu[025-028]:
# 3.5 s, 82 operations rows (4 node_removed, 4 node_back), 13 interruptions (cause operation), REBOOTING 64.
add ops-at-once scenarios/quickstart.json --set '/operations=[{"time":10000,"action":"update_image","image":"pytorch-24.05"},{"time":15000,"action":"add_nodes","nodes":"gpu[029-032]","cold_start_s":300},{"time":"05:00:00","action":"attach_volume","volume":"datasets"},{"time":30000,"action":"restart_workers"},{"time":40000,"action":"maintenance","nodes":"gpu[001-004]","duration":"02:00:00"},{"time":150000,"action":"remove_nodes","nodes":"gpu[025-028]"}]'
# Rolling: add_nodes gpu[025-032] at 0 (default cold start), attach_volume and restart_workers rolling (drain,
# restart when idle), update_image, remove_nodes gpu[001-002]: 0.30 s, 79 operations rows (32 + 32 restarts,
# 8 node_ready, 2 node_removed), DRAINING 52, DRAINED 66, no job ended.
add ops-rolling scenarios/quickstart.json --set '/metrics={"enabled":false}' --set '/operations=[{"time":0,"action":"add_nodes","nodes":"gpu[025-032]"},{"time":20000,"action":"attach_volume","volume":"scratch","rolling":true,"restart_s":300},{"time":60000,"action":"restart_workers","rolling":true,"restart_s":120},{"time":100000,"action":"update_image","image":"v2"},{"time":120000,"action":"remove_nodes","nodes":"gpu[001-002]"}]'
# Operations on an autoscaled pool: add_nodes on pool nodes, restart_workers at once, maintenance, rolling
# attach_volume, remove_nodes (retires the pool nodes that are up): 0.41 s, 175 operations rows (4 node_removed,
# 106 rolling restarts), 10 interruptions, 835 nodes created.
add ops-autoscale scenarios/autoscale-idle-window.json --set '/operations=[{"time":7200,"action":"add_nodes","nodes":"gpu[121-124]"},{"time":20000,"action":"restart_workers"},{"time":30000,"action":"maintenance","nodes":"gpu[005-008]","duration":3600},{"time":40000,"action":"attach_volume","volume":"ckpt","rolling":true},{"time":100000,"action":"remove_nodes","nodes":"gpu[001-008]"}]'
# Autoscaler with boot failures, min/max nodes, 16 per poll: 0.64 s, 1,993 created, 416 boot_failed (the
# 128-node job never fits under max_nodes 96 and stays PENDING).
add as-boot-failures scenarios/autoscale-idle-window.json --set /autoscaler/boot_failure_probability=0.2 \
  --set /autoscaler/min_nodes=8 --set /autoscaler/max_nodes=96 --set /autoscaler/scale_up_per_poll=16
# Power saving with failed resumes, ResumeRate 60/min, SuspendExcNodes: 0.66 s, 2,345 resumes, 495 boot_failed,
# 245 interruptions (cause resume_failure).
add ps-resume-failures scenarios/power-save-window.json --set /power_save/resume_failure_probability=0.2 \
  --set /power_save/ResumeRate=60 --set '/power_save/SuspendExcNodes=gpu[001-004]'
# Spot on an autoscaled pool (half the pool spot at $10/node-h, 2 reclaims per node-day, 60 s notice): 0.75 s,
# 665 spot interruptions (662 reclaimed rows), 412 job runs ended by spot_reclaim.
add spot-autoscale scenarios/autoscale-idle-window.json \
  --set '/cost/prices=[{"nodes":"gpu[001-064]","usd_per_gpu_hour":3,"model":"on_demand"},{"nodes":"gpu[065-128]","usd_per_node_hour":10,"model":"spot"}]' \
  --set /cost/spot_interruptions_per_node_day=2 --set /cost/spot_notice_s=60
# Spot on a static cluster (quickstart: reserved, on_demand and spot nodes, 1 reclaim per node-day): 0.36 s,
# 36 spot interruptions, 26 runs ended by spot_reclaim, 2,830 costs rows.
add spot-static scenarios/quickstart.json --set '/metrics={"enabled":false}' \
  --set '/cost={"prices":[{"nodes":"gpu[001-016]","usd_per_gpu_hour":2,"model":"reserved"},{"nodes":"gpu[017-024]","usd_per_gpu_hour":3,"model":"on_demand"},{"nodes":"gpu[025-032]","usd_per_gpu_hour":1,"model":"spot"}],"spot_interruptions_per_node_day":1,"sample_s":1800}'
# Quotas with action warn (quota-block-and-kill blocks): 0.64 s, 3 quota_events (warn), no cancels.
add quota-warn scenarios/quota-block-and-kill.json --set /cost/quotas/0/action=warn \
  --set /cost/quotas/1/action=warn --set /cost/quotas/2/action=warn
# Quotas under power saving, mixed actions, default warn/buffer on one, checks every 5 min: 0.56 s,
# 326 quota_events (2 blocks, 6 cancels, 315 refusals, 3 warnings).
add quota-power-save scenarios/power-save-window.json \
  --set '/cost/quotas=[{"user":"user001","limit_usd":12000,"warn_pct":80,"buffer_pct":10,"action":"block_and_kill"},{"user":"user003","limit_usd":9000,"warn_pct":50,"buffer_pct":0,"action":"warn"},{"user":"user013","limit_usd":5000,"action":"block_and_kill"}]' \
  --set /cost/quota_check_s=300
# Faults + autoscaler + cost together: 20x Llama 3 rates with health checks, Epilog check and Daly checkpoints on
# the autoscaled pool, a quarter of it spot (1 reclaim per node-day), 5% boot failures: 0.68 s, 116 faults,
# 1,350 nodes created, 89 boot failures, 383 spot interruptions, interruptions fault 19 / spot_reclaim 35 /
# resume_failure 1.
FA='/faults={"profile":"llama3","rate_scale":20,"HealthCheckInterval":120,"HealthCheckNodeState":"ANY,CYCLE","SlurmdTimeout":300,"nodes_per_switch":32,"epilog_check":true,"checkpoint":[{"min_gpus":64,"interval":"daly","write_s":60,"restart_s":600}]}'
add combo-faults-autoscale-spot scenarios/autoscale-idle-window.json --set "$FA" \
  --set '/cost/prices=[{"nodes":"gpu[001-096]","usd_per_gpu_hour":3,"model":"on_demand"},{"nodes":"gpu[097-128]","usd_per_gpu_hour":1.2,"model":"spot"}]' \
  --set /cost/spot_interruptions_per_node_day=1 --set /autoscaler/boot_failure_probability=0.05
# Faults + power saving + operations: 100x rates: 0.45 s, 81 faults (233 suppressed, many on powered-down
# nodes), 83 fault and 15 operation interruptions, 2,101 resumes, 107 worker restarts, a maintenance window.
add combo-faults-power-save-ops scenarios/power-save-window.json --set "$FA" --set /faults/rate_scale=100 \
  --set '/operations=[{"time":50000,"action":"restart_workers"},{"time":150000,"action":"maintenance","nodes":"gpu[001-008]","duration":"04:00:00"}]'

# ---------------------------------------------------------------------------------------------------------------

case_name() { printf '%s' "${1%%"$SEP"*}"; }

if [[ $LIST -eq 1 ]]; then
  for def in "${CASES[@]}"; do
    IFS=$SEP read -r -a parts <<<"$def"
    printf '%-30s %s\n' "${parts[0]}" "$(printf '%q ' "${parts[@]:1}")"
  done
  exit 0
fi

# Check --only names.
for o in "${ONLY[@]+"${ONLY[@]}"}"; do
  found=0
  for def in "${CASES[@]}"; do [[ $(case_name "$def") == "$o" ]] && found=1; done
  [[ $found -eq 1 ]] || { echo "same_results.sh: no case named '$o' (see --list)" >&2; exit 2; }
done

# log FILE WORDS...: records a command as run (shell-quoted) in FILE; --verbose prints a case's file.
log() {
  local file=$1
  shift
  printf '%s\n' "$(printf '%q ' "$@")" >>"$file"
}

# Normalised summary.json: keys mentioning "wall" removed (wall_time_s), key order kept, floats exact.
norm_summary() {
  "$PYTHON" -c '
import json, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if "wall" not in k.lower()}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
print(json.dumps(strip(json.load(open(sys.argv[1]))), indent=1))' "$1"
}

# dump_db DB DIR: DIR/schema.txt, DIR/tables.txt and one DIR/<table>.txt per table, written by one sqlite3 run of
# DIR/dump.sql; DIR/commands.txt holds the commands (for --verbose).
dump_db() {
  local db=$1 dir=$2 t cols order where
  mkdir -p "$dir"
  # One line per table: name, its columns (not runs.wall_time_s), its order (rowid, or the primary key of a
  # WITHOUT ROWID table).
  local info="SELECT m.name,
      (SELECT group_concat('\"' || c.name || '\"', ', ') FROM (SELECT name FROM pragma_table_info(m.name) ORDER BY cid) c
         WHERE NOT (m.name = 'runs' AND c.name = 'wall_time_s')),
      CASE WHEN upper(m.sql) LIKE '%WITHOUT ROWID%' THEN
        (SELECT group_concat('\"' || k.name || '\"', ', ') FROM
           (SELECT name FROM pragma_table_info(m.name) WHERE pk > 0 ORDER BY pk) k)
      ELSE 'rowid' END
    FROM sqlite_master m WHERE m.type = 'table' ORDER BY m.name"
  sqlite3 -readonly -bail -separator $'\t' "$db" "$info" </dev/null >"$dir/tables.tsv"
  cut -f1 "$dir/tables.tsv" >"$dir/tables.txt"
  {
    echo ".mode quote"
    echo ".output $dir/schema.txt"
    echo "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name;"
    while IFS=$'\t' read -r t cols order; do
      where=
      [[ $t == summary ]] && where=" WHERE key NOT LIKE '%wall%'"
      echo ".output $dir/$t.txt"
      echo "SELECT $cols FROM \"$t\"$where ORDER BY $order;"
    done <"$dir/tables.tsv"
  } >"$dir/dump.sql"
  {
    log /dev/stdout sqlite3 -readonly -bail -separator $'\t' "$db" "$info"
    echo "sqlite3 -readonly -bail $db <$dir/dump.sql  # which holds:"
    sed 's/^/    /' "$dir/dump.sql"
  } >"$dir/commands.txt"
  sqlite3 -readonly -bail "$db" <"$dir/dump.sql"
}

# first_diff LABEL A B: appends to DETAILS the first differing line of A and B.
DETAILS=()
first_diff() {
  local label=$1 a=$2 b=$3 out line na nb
  out=$(cmp "$a" "$b" 2>&1 || true)
  line=$(sed -n 's/.*line \([0-9][0-9]*\).*/\1/p' <<<"$out" | head -1)
  na=$(wc -l <"$a")
  nb=$(wc -l <"$b")
  if [[ -z $line ]]; then
    DETAILS+=("$label: $out")
    return
  fi
  # cmp's "EOF on X after byte N, line L" counts the complete lines of X: the difference is on line L+1.
  [[ $out == *EOF* ]] && line=$((line + 1))
  DETAILS+=("$label: first difference at line $line (old $na lines, new $nb lines)")
  DETAILS+=("  old: $(sed -n "${line}{p;q}" "$a" | cut -c1-240)")
  DETAILS+=("  new: $(sed -n "${line}{p;q}" "$b" | cut -c1-240)")
}

# run_case DEF: runs both binaries, compares, prints the case's line. Returns 1 if it differs.
# Every command run is recorded in $WORK/<case>/commands.txt (printed by --verbose).
run_case() {
  local def=$1 name scenario dir t0 t1 rc_old rc_new run_s cmds
  local -a parts args diffs
  IFS=$SEP read -r -a parts <<<"$def"
  name=${parts[0]}
  scenario=${parts[1]}
  args=("${parts[@]:2}")
  dir=$WORK/$name
  rm -rf "$dir"
  mkdir -p "$dir"
  cmds=$dir/commands.txt
  DETAILS=()
  diffs=()

  local -a cmd_old=("$OLD" run "$scenario" --out "$dir/old" --quiet "${args[@]+"${args[@]}"}")
  local -a cmd_new=("$NEW" run "$scenario" --out "$dir/new" --quiet "${args[@]+"${args[@]}"}")
  {
    echo "cd $(printf '%q' "$ROOT")"
    echo "$(printf '%q ' "${cmd_old[@]}")>$dir/old.log 2>&1 &  # at the same time as:"
    echo "$(printf '%q ' "${cmd_new[@]}")>$dir/new.log 2>&1"
  } >"$cmds"
  t0=$(date +%s.%N)
  (cd "$ROOT" && exec "${cmd_old[@]}") >"$dir/old.log" 2>&1 &
  local pid_old=$!
  (cd "$ROOT" && exec "${cmd_new[@]}") >"$dir/new.log" 2>&1 &
  local pid_new=$!
  rc_old=0; wait "$pid_old" || rc_old=$?
  rc_new=0; wait "$pid_new" || rc_new=$?
  t1=$(date +%s.%N)
  run_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')

  if [[ $rc_old -ne 0 || $rc_new -ne 0 ]]; then
    [[ $VERBOSE -eq 1 ]] && sed 's/^/    + /' "$cmds"
    echo "DIFF  $name: run failed (old exit $rc_old, new exit $rc_new) [${run_s} s, kept in $dir]"
    [[ $rc_old -ne 0 ]] && echo "    old: $(tail -n 1 "$dir/old.log" | cut -c1-240)"
    [[ $rc_new -ne 0 ]] && echo "    new: $(tail -n 1 "$dir/new.log" | cut -c1-240)"
    return 1
  fi

  # jobs.csv byte for byte.
  log "$cmds" cmp "$dir/old/jobs.csv" "$dir/new/jobs.csv"
  if ! cmp -s "$dir/old/jobs.csv" "$dir/new/jobs.csv"; then
    diffs+=(jobs.csv)
    first_diff jobs.csv "$dir/old/jobs.csv" "$dir/new/jobs.csv"
  fi

  # summary.json without wall-clock keys.
  echo "norm_summary $dir/old/summary.json >$dir/old.summary.json  # python3: drop keys mentioning wall" >>"$cmds"
  echo "norm_summary $dir/new/summary.json >$dir/new.summary.json" >>"$cmds"
  log "$cmds" cmp "$dir/old.summary.json" "$dir/new.summary.json"
  norm_summary "$dir/old/summary.json" >"$dir/old.summary.json"
  norm_summary "$dir/new/summary.json" >"$dir/new.summary.json"
  if ! cmp -s "$dir/old.summary.json" "$dir/new.summary.json"; then
    diffs+=(summary.json)
    first_diff summary.json "$dir/old.summary.json" "$dir/new.summary.json"
  fi

  # results.sqlite: schema and every table of either database (both dumps at the same time).
  dump_db "$dir/old/results.sqlite" "$dir/old.dump" &
  local pid_d=$!
  local rc_d=0
  dump_db "$dir/new/results.sqlite" "$dir/new.dump" || rc_d=$?
  wait "$pid_d" || rc_d=$?
  cat "$dir/old.dump/commands.txt" "$dir/new.dump/commands.txt" >>"$cmds" 2>/dev/null || true
  if [[ $rc_d -ne 0 ]]; then
    [[ $VERBOSE -eq 1 ]] && sed 's/^/    + /' "$cmds"
    echo "DIFF  $name: dumping results.sqlite failed [${run_s} s, kept in $dir]"
    return 1
  fi
  echo "cmp $dir/old.dump/<table>.txt $dir/new.dump/<table>.txt  # schema.txt and every table of either database" >>"$cmds"
  if ! cmp -s "$dir/old.dump/schema.txt" "$dir/new.dump/schema.txt"; then
    diffs+=(schema)
    first_diff schema "$dir/old.dump/schema.txt" "$dir/new.dump/schema.txt"
  fi
  local t
  while IFS= read -r t; do
    if [[ ! -f $dir/old.dump/$t.txt ]]; then
      diffs+=("table $t"); DETAILS+=("table $t: only in new")
    elif [[ ! -f $dir/new.dump/$t.txt ]]; then
      diffs+=("table $t"); DETAILS+=("table $t: only in old")
    elif ! cmp -s "$dir/old.dump/$t.txt" "$dir/new.dump/$t.txt"; then
      diffs+=("table $t")
      first_diff "table $t" "$dir/old.dump/$t.txt" "$dir/new.dump/$t.txt"
    fi
  done < <(sort -u "$dir/old.dump/tables.txt" "$dir/new.dump/tables.txt")

  [[ $VERBOSE -eq 1 ]] && sed 's/^/    + /' "$cmds"
  if [[ ${#diffs[@]} -eq 0 ]]; then
    echo "same  $name  [${run_s} s]"
    [[ $KEEP -eq 1 ]] || rm -rf "$dir"
    return 0
  fi
  local joined i
  joined=$(printf '%s, ' "${diffs[@]}")
  echo "DIFF  $name: ${joined%, } [${run_s} s, kept in $dir]"
  for ((i = 0; i < ${#DETAILS[@]} && i < 20; i++)); do echo "    ${DETAILS[i]}"; done
  return 1
}

mkdir -p "$WORK"
start=$(date +%s.%N)
n=0 bad=0
for def in "${CASES[@]}"; do
  name=$(case_name "$def")
  if [[ ${#ONLY[@]} -gt 0 ]]; then
    selected=0
    for o in "${ONLY[@]}"; do [[ $o == "$name" ]] && selected=1; done
    [[ $selected -eq 1 ]] || continue
  fi
  n=$((n + 1))
  run_case "$def" || bad=$((bad + 1))
done
total=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
echo "$n cases, $((n - bad)) same, $bad different, ${total} s"
[[ $bad -eq 0 ]]
