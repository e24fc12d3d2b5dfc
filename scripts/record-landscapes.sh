#!/usr/bin/env bash
# Re-records the CPU landscapes in tuner/testdata/ (the trial logs that
# tuner/strategy's acceptance test replays): one exhaustive search per
# (kernel, world, shape), logged with `search --log`. Run it on an otherwise
# idle machine: a landscape measured under load has a noisy top end, and
# an optimum that is only a lucky timing is not something a strategy can
# be asked to find. Takes about 40 minutes on a 2-core box. A landscape
# over about 300 KB is stored gzipped (gzip -9n: the same bytes each time;
# every reader of trial logs takes NAME.jsonl.gz for NAME.jsonl), so the
# tree stays small enough to copy to GPU machines.
#
#   make build && bash bench/record-landscapes.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-tuner/testdata}
bin=${BIN:-bin}
cache=$(mktemp -d)/configs.toml
trap 'rm -rf "$(dirname "$cache")"' EXIT

# kernel world shape iters
jobs=(
  "matmulrs 2 m=256,n=256,k=256 30"
  "agmm     2 m=256,n=256,k=256 30"
  "matmulrs 2 m=512,n=256,k=128 20"
  "agmm     2 m=512,n=256,k=128 20"
  "matmulrs 2 m=512,n=512,k=128 30"
  "agmm     2 m=512,n=512,k=128 30"
  "matmulrs 4 m=512,n=256,k=256 30"
  "agmm     4 m=512,n=256,k=256 30"
  # Held out since 2026-12-06 (recorded after the eighteenth fit; issue 57):
  "matmulrs 2 m=384,n=256,k=256 30"
  "matmulrs 2 m=512,n=384,k=128 30"
  "matmulrs 4 m=256,n=512,k=256 30"
)
for j in "${jobs[@]}"; do
  read -r kernel world shape iters <<<"$j"
  name=landscape-cpu-$kernel-w$world-$(tr -d '=,' <<<"$shape").jsonl
  tmp=$out/.$name.tmp
  rm -f "$tmp"
  echo "== $name (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$bin/symmtune" search --backend cpu --kernel "$kernel" --world "$world" \
    --shape "$shape" --dtype f32 --strategy exhaustive --iters "$iters" \
    --cache "$cache" --log "$tmp" --top 3
  mv "$tmp" "$out/$name"
  # Keep one copy, plain or gzipped: tests replay every file they find.
  rm -f "$out/$name.gz"
  if [ "$(stat -c %s "$out/$name")" -gt 300000 ]; then
    gzip -9n "$out/$name"
  fi
done
