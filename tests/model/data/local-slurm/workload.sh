#!/bin/bash
# Submits the local-slurm import workload; run as root with the local-slurm env sourced.
set -euo pipefail
cd "$SLURM_TWIN_JOB_DIR"
W=/tmp/li-work
sb() { sbatch --parsable -o /dev/null "$@"; }
log() { echo "$(date +%FT%T) $*" | tee -a $W/timeline.txt; }
log start
J1=$(sb -J gpu1 --gres=gpu:1 -c 4 --time=5 --wrap 'sleep 20');                              log "gpu1=$J1"
J2=$(sb -J gpn2 --qos=high --gpus-per-node=2 -c 8 --time=5 --wrap 'sleep 30');             log "gpn2=$J2"
J3=$(sb -J n2-gres4 -N 2 --ntasks-per-node=4 --gres=gpu:h100:4 --time=10 --wrap 'sleep 40'); log "n2-gres4=$J3"
J4=$(sb -J n2-gpn8 -N 2 --gpus-per-node=8 --time=5 --wrap 'sleep 25');                     log "n2-gpn8=$J4"
J5=$(sb -J arr --array=0-5%2 --gres=gpu:1 --time=3 --wrap 'sleep $((10 + 3 * SLURM_ARRAY_TASK_ID))'); log "arr=$J5"
JA=$(sb -J dep-a --gres=gpu:1 --time=2 --wrap 'sleep 10');                                 log "dep-a=$JA"
JB=$(sb -J dep-b --dependency=afterok:$JA --gres=gpu:1 --time=2 --wrap 'sleep 10');        log "dep-b=$JB"
JC=$(sb -J dep-c --dependency=afterany:$JB --gpus=3 --time=2 --wrap 'sleep 5');            log "dep-c=$JC"
JF=$(sb -J fail --gres=gpu:1 --time=2 --wrap 'sleep 5; exit 1');                           log "fail=$JF"
JN=$(sb -J dep-never --dependency=afterok:$JF --gres=gpu:1 --time=2 --wrap 'sleep 5');     log "dep-never=$JN"
JT=$(sb -J timeout --gres=gpu:2 --time=1 --wrap 'sleep 300');                              log "timeout=$JT"
JP=$(sb -J cancel-pending -N 4 --gpus-per-node=8 --time=10 --begin=now+3600 --wrap 'sleep 10'); log "cancel-pending=$JP"
JH=$(sb -J held -H --gres=gpu:1 --time=2 --wrap 'sleep 10');                               log "held=$JH"
JV=$(sb -J vision --account=vision --qos=low --gres=gpu:4 --time=3 --wrap 'sleep 15');    log "vision=$JV"
JD=$(sb -J debug1 -p debug --nice=100 --gres=gpu:1 --time=2 --wrap 'sleep 10');            log "debug1=$JD"
JR=$(sb -J resv --reservation=team --gres=gpu:2 --time=2 --wrap 'sleep 10');               log "resv=$JR"
JK=$(sb -J cancel-run --gres=gpu:1 --time=5 --wrap 'sleep 300');                           log "cancel-run=$JK"
JU=$(sb -J cpu-only -n 4 --mem=4G --time=2 --wrap 'sleep 5');                              log "cpu-only=$JU"
JX=$(runuser -u nobody -- sbatch --parsable -o /dev/null -J phys --gres=gpu:2 --time=4 --wrap 'sleep 20'); log "phys=$JX"
JY=$(runuser -u nobody -- sbatch --parsable -o /dev/null -J phys-n2 --qos=high -N 2 --gpus-per-node=1 --time=3 --wrap 'sleep 15'); log "phys-n2=$JY"
sleep 5
sacct -X -P -a --format=JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,State,ExitCode,NNodes,NCPUS,ReqTRES,AllocTRES,NodeList,Priority,Reservation,Constraints > $W/sacct-midrun.txt
squeue -a -o '%i %j %T %r' > $W/squeue-midrun.txt
log midrun-snapshot
sleep 10; scancel $JP; log "scancel $JP (cancel-pending)"
sleep 8;  scancel $JK; log "scancel $JK (cancel-run)"
sleep 7;  scontrol release $JH; log "release $JH (held)"
for i in $(seq 1 120); do
  others=$(squeue -h -o '%i' | grep -vx "$JN" || true)
  [ -z "$others" ] && break
  sleep 2
done
squeue -a -o '%i %j %T %r' > $W/squeue-before-never.txt
log "only dep-never left: $(squeue -h -o '%i %T %r')"
scancel $JN; log "scancel $JN (dep-never)"
for i in $(seq 1 30); do [ -z "$(squeue -h)" ] && break; sleep 1; done
log done
