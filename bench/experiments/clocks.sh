#!/bin/bash
# bench/experiments/clocks.sh: the SM clock and power of every GPU while cuBLAS mm alone
# runs on each of them at once (the baseline of issue 13's ratios), and
# while the fused agmm and matmulrs run one pinned config each, in one call.
# H200s cap their power under a bf16 GEMM (METHOD.md saw mm 13% faster on
# zeros), so the question is how much of a fused kernel's time over mm alone
# is a lower clock (copy engines and NVLink drawing power) rather than
# scheduling.
#   BIN=/tmp/bin OUT=$OUT W=2 bash bench/experiments/clocks.sh
# DTYPE (default bf16; e4m3: the mm loop is torch._scaled_mm with tensor
# scales and fast accumulation) and KERNELS (default "agmm matmulrs") pick
# what runs; AG and RS pin the configs.
# The default config of each search is measured first (the baseline), at a
# few iterations, and handed to the timed search by --resume, so the timed
# window holds the pinned config alone; samples below BUSY_W watts (the
# plugins starting, NVRTC) are left out of the summary. Marks use local time,
# as nvidia-smi's timestamps do.
set -u
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
W=${W:-2}
SHAPE=${SHAPE:-8192x3584x8192}
DTYPE=${DTYPE:-bf16}
KERNELS=${KERNELS:-agmm matmulrs}
ITERS=${ITERS:-4000}
BUSY_W=${BUSY_W:-300}
AG=${AG:-"algo=0,batch=0,chunks=1,copy=ce,copy_blocks=4,direction=pull,graph=0,impl=fused:256x128:s4:c2:g8,sm_reserve=0,streams=1"}
RS=${RS:-"algo=0,batch=0,chunks=2,graph=1,impl=fused:128x256:s4:c2:g8,push=ce,reduce=kernel,reduce_blocks=132,sm_reserve=0,streams=1"}
here=$(dirname "$0")
LOGS=$OUT/clocks-w$W
. "$here/../lib.sh"
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
IFS=x read -r M N K <<<"$SHAPE"

nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
	--format=csv,noheader,nounits -lms 20 >"$LOGS/smi.csv" &
smi=$!
trap 'kill $smi 2>/dev/null' EXIT
mark() { echo "$(date '+%Y/%m/%d %H:%M:%S.%3N') $1" >>"$LOGS/marks.txt"; }

mark idle
sleep 1
mark mm
for g in $(seq 0 $((W - 1))); do
	CUDA_VISIBLE_DEVICES=$g python3 - "$M" "$N" "$K" "$DTYPE" >"$LOGS/mm-$g.txt" 2>&1 <<'EOF' &
import sys, time, torch
m, n, k = (int(x) for x in sys.argv[1:4])
a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
b = torch.randn(n, k, dtype=torch.bfloat16, device="cuda")
if sys.argv[4] == "bf16":
    bt = b.t()
    def mm(): return a @ bt
else:  # FP8 operands over e4m3's range, tensor scales, fast accumulation
    a8, b8 = ((x * 100).clamp(-448, 448).to(torch.float8_e4m3fn) for x in (a, b))  # no NaN from overflow
    one = torch.tensor(1e-2, device="cuda")
    def mm(): return torch._scaled_mm(a8, b8.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
for _ in range(50):
    mm()
ts, end = [], time.time() + 4
while time.time() < end:
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); mm(); e.record(); e.synchronize()
    ts.append(s.elapsed_time(e) * 1e3)
ts.sort()
print(f"mm {sys.argv[4]} {m}x{n}x{k} median {ts[len(ts) // 2]:.1f} us over {len(ts)} calls")
EOF
done
wait $(jobs -p | grep -v "^$smi$") 2>/dev/null
mark mm-end
cat "$LOGS"/mm-*.txt

for kernel in $KERNELS; do
	where=$AG
	[ "$kernel" = matmulrs ] && where=$RS
	common=(--plugin-dir "$BIN" --backend cuda --kernel "$kernel" --world "$W" --shape "m=$M,n=$N,k=$K"
		--dtype "$DTYPE" --cache "$LOGS/configs.toml" --strategy exhaustive)
	timeout 120 "$BIN/symmtune" search "${common[@]}" --budget-trials 1 --iters 5 --warmup 1 \
		--log "$LOGS/$kernel-default.jsonl" >"$LOGS/$kernel-default.txt" 2>&1 || echo "$kernel default: rc $?"
	mark "$kernel"
	timeout 200 "$BIN/symmtune" search "${common[@]}" --where "$where" --iters "$ITERS" --warmup 20 \
		--resume "$LOGS/$kernel-default.jsonl" --log "$LOGS/$kernel.jsonl" >"$LOGS/$kernel.txt" 2>&1 ||
		echo "$kernel: rc $?"
	mark "$kernel-end"
	grep -h "fused" "$LOGS/$kernel.txt" | grep -v winner | cut -c1-150
done
kill $smi
python3 - "$LOGS" "$BUSY_W" <<'EOF'
import statistics, sys
logs, busy = sys.argv[1], float(sys.argv[2])
marks = [l.split(" ", 2) for l in open(f"{logs}/marks.txt").read().splitlines()]
marks = [(f"{d} {t}", name) for d, t, name in marks]
rows = []
for line in open(f"{logs}/smi.csv"):
    f = [x.strip() for x in line.split(",")]
    try:
        rows.append((f[0], int(f[1]), float(f[2]), float(f[3]), f[5]))
    except (ValueError, IndexError):
        pass
print("phase,gpu,samples_busy,sm_clock_mhz_median,power_w_median,event_reasons_mode")
for (start, name), (end, _) in zip(marks, marks[1:]):
    if name.endswith("-end"):
        continue
    for g in sorted({r[1] for r in rows}):
        s = [r for r in rows if r[1] == g and start <= r[0] < end and (name == "idle" or r[3] >= busy)]
        if not s:
            print(f"{name},{g},0,,,")
            continue
        print(f"{name},{g},{len(s)},{statistics.median(r[2] for r in s):.0f},{statistics.median(r[3] for r in s):.0f},"
              f"{statistics.mode(r[4] for r in s)}")
EOF
