#!/bin/sh
# Runs the transfer measurement: cold (--no-transfer), then with transfer,
# each into a fresh cache; prints each run's summary lines.
set -e
out=${OUT:-/tmp/transfer-out}  # the device runner sets OUT
mkdir -p $out
nproc > $out/nproc; lscpu | grep "Model name" > $out/cpu || true
for mode in cold transfer; do
  flag=""; [ $mode = cold ] && flag=--no-transfer
  start=$(date +%s)
  bin/symmtune search --config configs/transfer-cpu.toml $flag --cache $out/$mode.toml --log $out/$mode.jsonl > $out/$mode.txt 2> $out/$mode.err
  echo "$mode: $(( $(date +%s) - start )) s"
done
