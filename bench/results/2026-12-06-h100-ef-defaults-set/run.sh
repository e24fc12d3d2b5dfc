#!/bin/bash
# PLANNED (written 2026-12-05 05:44 UTC; its call that day got no machine; rename the folder to the day and card it runs on). What
# evict-first B in the untuned 64-row bf16 tiles (merged after 2026-12-05-h200-evict-first-bf16-defaults)
# does to issue 56's small bf16 set and in a torch program. A measurement, not a keep decision:
# (Recomputed 2026-12-05 evening, before any run: main's untuned picks now include the wave-width tiles
# (a822bfd); of the four torch-program shapes only 128 x 7168 x 8192 moved, 64x128:s8 -> 64x112:s9, and
# "new" below is main's build with both changes, so part 1 counts evict-first and wave widths together.)
# 1. Issue 56's small set (25 shapes, M 64-1,024), bf16, the untuned tile (-tiles default) of main's
#    build after the merge (.gpu/ef3/new.txz) and of the build before it (.gpu/ef3/old.txz, f888407),
#    in alternating passes new, old, new, old (0.2 s windows, each between cuBLASLt's best): the count at
#    or above 1.00x cuBLASLt, before and after. Shapes whose untuned tile is not a 64-row ping-pong one
#    run the same kernel in both builds: they are the control for the clocks' drift between passes.
# 2. bench/experiments/program_kernels.py (torch.profiler, every call queued): agmm at world 1 at four
#    shapes of the held-out check, the untuned tile with and without ":ef" (cfgs.json), 15 rounds; the
#    kernels' own times against torch.mm's in the same rounds, products checked against torch.mm's.
# Carry [".gpu/ef3"] (new.txz, old.txz; lib.txz: python/symmtune/libsymmtune.so of main after the merge).
# Build them here: bash bench/results/PLANNED-ef-defaults-set/build.sh (new, old, lib; about 30 s).
set -u
D=bench/results/PLANNED-ef-defaults-set
for b in new old; do mkdir -p /tmp/$b && tar xJf .gpu/ef3/$b.txz -C /tmp/$b; done
tar xJf .gpu/ef3/lib.txz
export SYMMTUNE_CUBIN_CACHE=/tmp/cubin
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $OUT/machine.txt
R=/tmp/ef3; mkdir -p $R
for pass in 1 2 3 4; do
	b=new; [ $((pass % 2)) = 0 ] && b=old
	BIN=/tmp/$b/bin OUT=$R/p$pass-$b SET=small DTYPES=bf16 TILES=default SUSTAIN=0.2s ROUNDS=1 PER_SHAPE=30 DEADLINE=115 \
		bash bench/gemmalone-56.sh > $R/p$pass-$b.log 2>&1
	echo "pass $pass ($b) at $SECONDS"
done
for pass in 1 2 3 4; do
	f=$(ls $R/p$pass-*/gemmalone-56/gemmalone-bf16.csv)
	grep ',fused,' $f | awk -F, -v p=$pass '{split($8,a," "); print p, $1, $3, a[1]}'
done > $R/cells.txt
awk '{n[$1]++; if ($4 >= 1.0) up[$1]++} END {for (p in n) print "pass", p, "shapes", n[p], "at or above 1.00:", up[p]+0}' $R/cells.txt | sort
export SYMMTUNE_LIB=$PWD/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
timeout 120 torchrun --nproc-per-node 1 bench/experiments/program_kernels.py --configs $D/cfgs.json --rounds 15 --json $R/kernels.json 2>&1 | grep -v "Warning\|warnings.warn" > $R/kernels.txt; echo "program_kernels rc ${PIPESTATUS[0]} at $SECONDS"
grep -v '^\s*$' $R/kernels.txt | tail -30 | cut -c1-220
tar czf $OUT/ef3.tgz -C /tmp ef3
