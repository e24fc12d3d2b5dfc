# bench/lib.sh: what every GPU benchmark script here and in experiments/
# starts with (source it after setting LOGS): NVLink multicast off in everything started from the
# script (it is forbidden on the shared machines), unbuffered Python with
# symmtune's package and library, a cubin cache, and the machine's state in
# $LOGS/machine.txt; write_report draws the plots of $LOGS's trial logs.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
# The tables' scripts read trial logs with symmtune.triallog (Go's parser
# in libsymmtune): the repository's package, and the library from bins.tgz
# unpacked beside $BIN (where `make lib` puts it when BIN is bin). bench/
# itself is on the path too, so a script of bench/experiments/ imports the
# maintained helpers (peer_method, torch_gemm, torch_fp8_cases) by name.
here_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PYTHONPATH=$(cd "$here_lib/../python" && pwd):$here_lib${PYTHONPATH:+:$PYTHONPATH}
export SYMMTUNE_LIB=${SYMMTUNE_LIB:-$(dirname "${BIN:-bin}")/python/symmtune/libsymmtune.so}
export SYMMTUNE_CUBIN_CACHE=${SYMMTUNE_CUBIN_CACHE:-/tmp/symmtune-cubin}
mkdir -p "$LOGS"
{
	date -u
	nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
	nvidia-smi topo -m
} >"$LOGS/machine.txt" 2>&1

# write_report FILE: `symmtune report` of $LOGS's trial logs with the peers
# CSVs there, by the carried $BIN/symmtune (no Go on the GPU machine). If a
# peers CSV is unreadable (its run failed) the report is drawn without the
# peers; a failed report never fails the benchmark.
write_report() {
	local peers=() f
	for f in "$LOGS"/peers-*.csv; do [ -s "$f" ] && peers+=(--peers "$f"); done
	"$BIN/symmtune" report --log "$LOGS" "${peers[@]}" -o "$1" ||
		"$BIN/symmtune" report --log "$LOGS" -o "$1" || echo "report failed: rc $?"
}
