#!/bin/bash
# Program target rows of CiFHER and REED, batched (as the targets are today) and streamed.
T=${TESSERA:-target/release/tessera}  # main's release binary
run() { # label args...
  for ks in "" "--streamed-keyswitch"; do
    /usr/bin/time -f "%e s %M KB" $T simulate "$@" $ks --json 2>/tmp/err.txt | python3 -c "
import json,sys
v=json.loads(sys.stdin.read().strip().splitlines()[-1])
keys=['time_s','time_per_iteration_s','time_per_unit_s','time_per_run_s','peak_onchip_bytes','offchip_bytes']
print(json.dumps({'args':sys.argv[1],'ks':sys.argv[2] or 'batched',**{k:v.get(k) for k in keys if k in v}}))
" "$*" "$ks"
    tail -1 /tmp/err.txt
  done
}
run --arch cifher --workload helr --size 256 --params cifher
run --arch cifher --workload helr --size 1024 --params cifher
run --arch cifher --workload sort --params cifher
run --arch cifher-16 --workload sort --params cifher
run --arch cifher-64 --workload sort --params cifher
run --arch cifher --workload resnet20 --params cifher
run --arch cifher-16 --workload resnet20 --params cifher
run --arch cifher-64 --workload resnet20 --params cifher
run --arch reed --workload linreg-inference --params reed
run --arch reed --workload linreg --params reed
run --arch reed --workload logreg-inference --params reed
run --arch reed --workload logreg --params reed-dnum3
run --arch reed --workload dnn-train --params reed-dnum3
run --arch reed --workload dnn-inference --params reed-dnum3
