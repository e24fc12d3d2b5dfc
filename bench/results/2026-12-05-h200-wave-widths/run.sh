#!/bin/bash
# Written 2026-12-05 11:35 UTC before any run; ran 2026-12-05 15:01 UTC on 1 x H200 (nvidia-h200), results in ww.tgz and ../2026-12-05-h200-wave-widths.md.
# Wave-width 64-row tiles at small M (issue 56), branch wave-widths (e2609fc; the build first named,
# a9b3f87, was replaced at 12:35 before any run: an odd block count copies its one block, and no peer
# buffers at the widths where the epilogue spilled): wgmma wrappers 48, 80, 96 and 112 wide (the epilogue may end on one 16-column block), and gpu.DefaultTile's candidates gain
# 64x192:s6, 64x160:s7, 64x112:s9, 64x96:s10, 64x80:s11 and 64x48:s12 (all :c2:g8:pp), taken only where
# narrowFits (memory-bound, one wave at least 3/4 full), so that at 64-256 rows about one wave of tiles
# puts every SM on its own slice of B (2026-12-05-h200-smallm-ksweep: 64 CTAs of 64x128 streamed B at
# 4.12 TB/s, 128 at 4.31, cuBLASLt's rate). Build: git worktree add /tmp/wt-ww wave-widths &&
#   ln -s "$PWD/.cuda" /tmp/wt-ww/.cuda && (cd /tmp/wt-ww && CGO_ENABLED=1 go build -tags cuda -ldflags
#   "-s -w" -o /tmp/gw/bin/gemmalone ./bench/gemmalone) && tar cJf .gpu/ww/ww.txz -C /tmp/gw bin
# carry [".gpu/ww"].
# The cells: 19 shapes x {bf16, e4m3_row}, each timing main's untuned tile (gpu.DefaultTileFor of a plain
# product, computed before the run on main 82114e0) and the branch's, in one process a shape, two rounds
# (the order reversed in the second), 0.2 s windows, each between cuBLASLt's best right before and after.
# None of these shapes was timed with a wave-width tile (64x14784x8192 and 128x7168x8192 were, with main's).
# Keep rule, fixed before the run, per dtype and per group of widths (48; 80, 96, 112; 160, 192: amended
# at 12:02 UTC, before any run, from two groups, so that 48, whose A tile is read again per 48 columns of
# B, 1.33x B's bytes from L2, cannot sink the others), on the cells whose new tile is of the group: the
# new tile's ratio to cuBLASLt (bf16: column 8; e4m3_row: column 11, to cuBLASLt FP8; the mean of the rounds) over the old tile's is above 1 on at
# least 3/4 of the cells, 1.01 or more on average (geometric), and 0.98 or more on every cell; and every
# new tile of the group passes gemmalone's check (poisoned C, float64 reference) in every process, the
# -rs checks below included. A group kept in a dtype goes to main for that dtype (bf16 rules f16 too);
# the rest stays on the branch. No second judging: every cell here is new to these tiles.
set -u
mkdir -p /tmp/w && tar xJf .gpu/ww/ww.txz -C /tmp/w
export BIN=/tmp/w/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin CUDA_VISIBLE_DEVICES=0
R=/tmp/ww; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
# shape, main's bf16 tile, the branch's bf16 tile (e4m3_row: the same names without ":ef").
C="64x14336x4096 64x128:s8:c2:g8:pp:ef 64x112:s9:c2:g8:pp:ef
64x14336x8192 64x128:s8:c2:g8:pp:ef 64x112:s9:c2:g8:pp:ef
64x14784x8192 64x128:s8:c2:g8:pp:ef 64x112:s9:c2:g8:pp:ef
64x10240x8192 64x128:s8:c2:g8:pp:ef 64x80:s11:c2:g8:pp:ef
64x5120x8192 64x128:s8:c2:g8:pp:ef 64x48:s12:c2:g8:pp:ef
256x2560x8192 64x128:s8:c2:g8:pp:ef 64x80:s11:c2:g8:pp:ef
256x1280x8192 64x128:s8:c2:g8:pp:sk2 64x48:s12:c2:g8:pp:ef
256x5120x8192 64x224:s6:c2:g8:pp:ef 64x160:s7:c2:g8:pp:ef
64x12288x4096 64x128:s8:c2:g8:pp:ef 64x96:s10:c2:g8:pp:ef
64x6144x4096 64x128:s8:c2:g8:pp:ef 64x48:s12:c2:g8:pp:ef
64x18944x4096 64x224:s6:c2:g8:pp:ef 64x160:s7:c2:g8:pp:ef
128x7168x8192 64x128:s8:c2:g8:pp:ef 64x112:s9:c2:g8:pp:ef
128x10240x4096 64x224:s6:c2:g8:pp:ef 64x160:s7:c2:g8:pp:ef
128x5120x4096 64x128:s8:c2:g8:pp:ef 64x80:s11:c2:g8:pp:ef
192x3584x8192 64x128:s8:c2:g8:pp:ef 64x96:s10:c2:g8:pp:ef
192x8192x4096 64x224:s6:c2:g8:pp:ef 64x192:s6:c2:g8:pp:ef
128x12288x8192 64x224:s6:c2:g8:pp:ef 64x192:s6:c2:g8:pp:ef
256x3584x4096 64x128:s8:c2:g8:pp:ef 64x112:s9:c2:g8:pp:ef
128x2560x4096 64x128:s8:c2:g8:pp:sk2 64x48:s12:c2:g8:pp:ef"
# The reduce-scatter epilogue (one rank; rows by TMA stores, then each warp's stores, the path whose
# pairs of 16-column blocks may now end in one) on the odd-block widths, checked, both dtypes.
for dt in bf16 e4m3_row; do
	timeout 60 $BIN/gemmalone -dtype $dt -shapes 64x10240x8192 -tiles 64x48:s12:c2:g8:pp,64x80:s11:c2:g8:pp,64x112:s9:c2:g8:pp \
		-sustain 0.05s -bt=false -rs > $R/rs-$dt.csv 2> $R/rs-$dt.err; echo "rs $dt rc $? at $SECONDS"
done
for r in 1 2; do
	for dt in bf16 e4m3_row; do
		echo "$C" | while read -r s old new; do
			[ $SECONDS -lt ${DEADLINE:-555} ] || { echo "deadline: $dt round $r $s and later not run"; break; }
			[ $dt = bf16 ] || { old=${old%:ef}; new=${new%:ef}; }
			t="$old,$new"; [ $r = 2 ] && t="$new,$old"
			timeout 40 $BIN/gemmalone -dtype $dt -shapes $s -tiles $t -sustain 0.2s -bt=false >> $R/$dt.csv 2>> $R/$dt.err ||
				echo "$dt $s round $r rc $? at $SECONDS"
		done
		echo "$dt round $r done at $SECONDS"
	done
done
for dt in bf16 e4m3_row; do
	col=8; [ $dt = bf16 ] || col=11
	echo "== $dt: shape tile mean-ratio (rounds) rel_err"
	grep ',fused,' $R/$dt.csv | awk -F, -v c=$col '{split($c,a," "); k=$1" "$3; s[k]+=a[1]; n[k]++; r[k]=r[k]" "a[1]; e[k]=e[k]" "$5} END{for(k in s) printf "%s %.3f%s |%s\n", k, s[k]/n[k], r[k], e[k]}' | sort
	echo "== $dt -rs"; grep -v '^#' $R/rs-$dt.csv | cut -d, -f1-8 | head -20; tail -3 $R/rs-$dt.err
	tail -5 $R/$dt.err
done
tar czf $OUT/ww.tgz -C /tmp ww
