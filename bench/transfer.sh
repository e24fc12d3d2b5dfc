#!/bin/sh
# The transfer measurement (docs/transfer.md): tunes a job file ($JOBS_FILE,
# default configs/transfer-cpu.toml) cold (--no-transfer), then with
# transfer, each into a fresh cache, then re-measures each job's two winners
# side by side, alternating, so that they are compared under the same
# conditions rather than by the scores of two runs minutes apart. Writes
# everything into $OUT. On a GPU machine (after `tar xzf .gpu/bins.tgz -C
# /tmp`): BACKEND=cuda DTYPE=bf16 BIN=/tmp/bin JOBS_FILE=configs/transfer-cuda.toml.
# ROUNDS (default 3) is how many times each winner is re-measured.
# COMPARE (default "cold transfer") names the two searches compared, each of
# cold (--no-transfer), transfer (the default search) and exhaustive
# (--exhaustive): COMPARE="transfer exhaustive" with
# JOBS_FILE=configs/exhaustive-cuda.toml holds the default search's winner
# against the exhaustive optimum (docs/results.md's search-quality table).
set -e
out=${OUT:-/tmp/transfer-out} # the device runner sets OUT
jobs_file=${JOBS_FILE:-configs/transfer-cpu.toml}
backend=${BACKEND:-cpu}
dtype=${DTYPE:-f32}
bin=${BIN:-bin}
mkdir -p "$out"
nproc > "$out/nproc"; lscpu | grep "Model name" > "$out/cpu" || true
set -- ${COMPARE:-cold transfer}
first=$1 second=$2
for mode in "$first" "$second"; do
  case $mode in
    cold) flag=--no-transfer ;;
    transfer) flag="" ;;
    exhaustive) flag=--exhaustive ;;
    *) echo "COMPARE: $mode is not cold, transfer or exhaustive" >&2; exit 2 ;;
  esac
  start=$(date +%s)
  "$bin/symmtune" search --plugin-dir "$bin" --config "$jobs_file" $flag --cache "$out/$mode.toml" --log "$out/$mode.jsonl" > "$out/$mode.txt" 2> "$out/$mode.err"
  echo "$mode: $(( $(date +%s) - start )) s"
done
# One line per job, in job-file order: kernel shape winner.
jobs() { awk '/^(agmm|matmulrs)  backend=/ {k=$1; s=$5; sub("shape=","",s)} /^winner: / {print k, s, $2}' "$out/$1.txt"; }
jobs "$first" > "$out/$first.winners"; jobs "$second" > "$out/$second.winners"
paste -d' ' "$out/$first.winners" "$out/$second.winners" | while read -r k s cw _ _ tw; do
  for round in $(seq "${ROUNDS:-3}"); do
    for which in "$first" "$second"; do
      c=$cw; [ "$which" = "$second" ] && c=$tw
      rm -f "$out/one.jsonl"
      "$bin/symmtune" search --plugin-dir "$bin" --backend "$backend" --kernel "$k" --world 2 --dtype "$dtype" --shape "$s" --where "$c" --budget-trials 0 \
        --iters 30 --warmup 2 --no-transfer --cache "$out/remeasure.toml" --log "$out/one.jsonl" > /dev/null 2>&1 || true
      cat "$out/one.jsonl" >> "$out/remeasure.jsonl"
      # The config's re-measured median (its refined row) from the run's log.
      med=$(python3 -c '
import json, sys
want = sys.argv[2]
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = ",".join(f"{k}={v}" for k, v in sorted(r["config"].items()))
    if r.get("refined") and key == want and r.get("score_us") is not None:
        print(r["score_us"])
' "$out/one.jsonl" "$c")
      echo "$k $s $which $round $med $c"
    done
  done
done > "$out/remeasure.txt"
cat "$out/remeasure.txt"
