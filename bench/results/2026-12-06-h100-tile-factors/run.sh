#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-06 06:04 UTC (151 s): 2026-12-06-h100-tile-factors.md. The factor ratio
# was 1.046: per the reading below, the factors are per card.
# PLANNED (written 2026-12-06 06:03 UTC, before any run; rename the folder to the day and card it runs on).
# Issue 56: are the untuned rule's tile factors (gpu.tileEfficiency) the same on an H100? They were
# set on 1 x H200 (2026-12-03 call P: the 23 shapes of the set where every tile fills 8 waves or more,
# one round of 0.2 s windows; geometric mean of each tile's speed over 128x256:cl2's on the same shape:
# 128x128:pp 0.965, 128x224:s5 (g4) 0.946). On 1 x H100 (2026-12-06-h100-wide-pick.md) 128x224:g16 ran
# about 15% faster than 128x128:pp at equal waves at 1,024-1,536 rows. Here the same 23 shapes, the
# same method (one round, 0.2 s windows, long products too), the tiles 128x256:s4:c2:g8:cl2 (the
# reference), 128x224:s5:c2:g4, 128x224:s5:c2:g16 and 128x128:s6:c2:g4:pp.
# Reading, fixed before the run: the H200's 128x224:g4 over 128x128:pp factor ratio is 0.946/0.965 =
# 0.980. If this card's is 1.03 or more (or 0.93 or less), the factors are per card, and a per-card
# table is the next step (its own held-out check on both cards). If it is within 0.93-1.03, the factors
# hold on this card too and the 1,024-row gain is a matter of rows, not of the card. A measurement, no
# rule change from this run alone.
#   Bundle: bash bench/results/2026-12-06-h100-fp8-set-retime/build.sh (.gpu/set/gm.txz); carry [".gpu/set"].
set -u
mkdir -p /tmp/gm && tar xJf .gpu/set/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/tf; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
MANY="16384x3584x8192 4096x14336x4096 8192x8192x8192 12288x5120x5120 1024x57344x8192 4096x10240x8192 4096x14336x8192
4096x28672x8192 4096x57344x8192 16384x2560x8192 16384x5120x8192 16384x7168x8192 16384x8192x1024 16384x8192x2048
16384x8192x3584 16384x8192x4096 16384x8192x7168 16384x8192x8192 16384x8192x14336 16384x8192x28672 16384x10240x8192
16384x14336x8192 16384x28672x8192"
OUT=$R/set SET=small SHAPES="$(echo $MANY)" DTYPES=bf16 SUSTAIN=0.2s LONG_SUSTAIN=0.2s ROUNDS=1 PER_SHAPE=25 \
	TILES="128x256:s4:c2:g8:cl2,128x224:s5:c2:g4,128x224:s5:c2:g16,128x128:s6:c2:g4:pp" DEADLINE=${DEADLINE:-230} \
	bash bench/gemmalone-56.sh > $R/set.log 2>&1
echo "gemmalone-56 rc $? at $SECONDS"; grep -E 'deadline|rc ' $R/set.log | head -3
python3 - $R/set/gemmalone-56/gemmalone-bf16.csv <<'PY'
import csv, math, statistics, sys
rows = {}
for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    if r[0] != "shape" and r[1] == "fused":
        rows.setdefault(r[0], {})[r[2]] = float(r[7].split()[0])
ref = "128x256:s4:c2:g8:cl2"
full = [s for s in rows if len(rows[s]) == 4]
print(len(full), "shapes with all four tiles")
f = {t: math.exp(statistics.mean(math.log(rows[s][t] / rows[s][ref]) for s in full)) for t in rows[full[0]]}
for t, v in f.items():
    print(f"  {t} over {ref}: {v:.3f}")
print(f"128x224:g4 over 128x128:pp {f['128x224:s5:c2:g4'] / f['128x128:s6:c2:g4:pp']:.3f} (H200: 0.980)")
PY
tar czf $OUT/tf.tgz -C /tmp tf
