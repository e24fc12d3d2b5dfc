# Sourced by a device call's script (bench/results/*/run.sh), from the repository root:
#
#   . bench/experiments/device-setup.sh BUNDLE RESULTS
#
# BUNDLE: a gemmalone bundle built here (.gpu/NAME/gm.txz: bin/gemmalone and what it loads), unpacked
# into $GM (default /tmp/gm); BIN ($GM/bin) and the cubin cache are exported for bench/gemmalone-56.sh and the experiment
# scripts. RESULTS: the call's results folder, made afresh, with machine.txt (the card, its driver, power
# limit and clock), which is printed too. BUNDLE "-" unpacks nothing (a script that stops on some cards
# before it needs the bundle unpacks it itself).
if [ $# -ne 2 ]; then
	echo "usage: . bench/experiments/device-setup.sh BUNDLE RESULTS" >&2
	return 2 2>/dev/null || exit 2
fi
GM=${GM:-/tmp/gm}
if [ "$1" != - ]; then
	mkdir -p "$GM" && tar xJf "$1" -C "$GM"
fi
export BIN=$GM/bin SYMMTUNE_CUBIN_CACHE=${SYMMTUNE_CUBIN_CACHE:-/tmp/cubin}
rm -rf "$2" && mkdir -p "$2"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > "$2/machine.txt"
cat "$2/machine.txt"
