#!/bin/sh
# check-guide.sh: what docs/plugins.md ("Write a kernel plugin") tells a
# newcomer to run, run by CI so that the guide cannot rot. It builds the
# example all-gather in Go (plugins/allgather, by make build) and in Python
# (python/examples/allgather, installed by make python-plugins), searches
# each at world 2 on the CPU and looks its winner up, into a cache of its
# own that it removes. Run after `make build python-plugins`.
set -eu
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cache="$tmp/configs.toml"

# The Python SDK is imported from the checkout; a CPU search needs no libsymmtune.
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export SYMMTUNE_LIB="$tmp/absent/libsymmtune.so"

"$BIN/symmtune" plugins --backend cpu >"$tmp/plugins.txt" # exits 1 if any plugin fails to load
for kernel in allgather pyallgather; do
	grep -q "^$kernel  \[cpu\]" "$tmp/plugins.txt" || { echo "check-guide: symmtune plugins does not list $kernel" >&2; exit 1; }
	echo "== $kernel: search at world 2 on the CPU, then lookup"
	"$BIN/symmtune" search --kernel "$kernel" --world 2 --shape n=65536 --backend cpu --iters 5 --cache "$cache" | grep '^winner:'
	"$BIN/symmtune" lookup --kernel "$kernel" --world 2 --shape n=65536 --backend cpu --cache "$cache"
done
"$BIN/symmtune" show --cache "$cache"
