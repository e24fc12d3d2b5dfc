#!/bin/sh
# check-wheel.sh WHEEL: installs the platform wheel (make wheel) in a bare
# virtual environment and runs its `symmtune` command where there is no Go:
# plugins, the CPU quickstart search, a lookup, and the guide's Go example.
# Everything goes to a temporary directory it removes. The venv is
# python3 -m venv (Debian: python3-venv, installed when missing and run as
# root); the wheel is installed with --no-deps from the file alone, so no
# package index is needed: its command needs no Python package.
set -eu
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: check-wheel.sh WHEEL (make wheel writes bin/symmtune-*.whl)" >&2; exit 2; }
whl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."
repo=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

py=/usr/bin/python3
if ! $py -m venv "$tmp/probe" >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get install -y -qq python3-venv >/dev/null
	else
		echo "check-wheel: $py -m venv fails: install Debian's python3-venv" >&2; exit 1
	fi
fi
rm -rf "$tmp/probe"
$py -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --no-deps --no-index "$whl"

# A clean environment: the venv's bin first, no Go, no checkout on PYTHONPATH.
run() { env -i HOME="$tmp" PATH="$tmp/venv/bin:/usr/bin:/bin" SYMMTUNE_CACHE="$tmp/configs.toml" "$@"; }
run sh -c '! command -v go' >/dev/null || { echo "check-wheel: go is on the clean PATH" >&2; exit 1; }
echo "== the wheel's symmtune: plugins"
# Every plugin must load, the CUDA builds too (they describe themselves
# without a GPU): a pipe into grep would hide the command's failure, as it
# hid the CUDA GEMM plugins' refusal on 2026-12-05.
if ! run symmtune plugins >"$tmp/plugins.txt" 2>&1; then
	cat "$tmp/plugins.txt" >&2
	echo "check-wheel: symmtune plugins failed" >&2
	exit 1
fi
grep '^[a-z]' "$tmp/plugins.txt"
echo "== the wheel's symmtune: search --config configs/quickstart-cpu.toml"
run symmtune search --config "$repo/configs/quickstart-cpu.toml" | grep '^winner:'
echo "== the wheel's symmtune: lookup, and the guide's all-gather"
run symmtune lookup --kernel allreduce --world 2 --shape n=16384
run symmtune search --kernel allgather --world 2 --shape n=65536 --backend cpu --iters 5 | grep '^winner:'
run symmtune lookup --kernel allgather --world 2 --shape n=65536
du -k "$whl" | awk '{printf "wheel: %.1f MB\n", $1 / 1024}'
