#!/bin/sh
# fetch-cuda.sh DIR: put NVRTC 11.8 (libnvrtc.so.11.2, for compiling the
# kernels in tests without a GPU) and a CUDA 12 driver library (libcuda1,
# for checking that it exports every entry point cuda/cu binds; it loads,
# though cuInit fails, without a GPU) under DIR, without installing anything
# system-wide. No headers: nothing symmtune builds includes a CUDA header
# (the driver, NVRTC, cuBLASLt and NVML are declared by their bindings and
# loaded at run time).
#
# Why 11.8: Debian bookworm's non-free packages; the oldest NVRTC symmtune
# supports, so CI compiles the kernels with it. A private apt configuration
# (sources, lists, cache) lives in DIR/apt, so the host's apt state is not
# touched and no root is needed. The result is cached: a second run with
# DIR/ok present does nothing.
#
# It also puts NVRTC 12.4 (Debian trixie's non-free libnvrtc12, which runs
# on bookworm) under DIR/nvrtc12: NVRTC 11.8 cannot build sm_90a (wgmma,
# setmaxnreg), so the Hopper GEMM's variants are compiled in CI with it.
set -eu
DIR=${1:-.cuda}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# private_apt SUBDIR SUITE: an apt configuration of its own under
# DIR/SUBDIR (sources, lists, cache), so the host's apt state is untouched.
private_apt() {
	d="$DIR/$1"
	mkdir -p "$d/apt/lists/partial" "$d/apt/cache/archives/partial" "$d/apt/etc/preferences.d" "$d/debs"
	echo "deb [signed-by=$KEYRING] $MIRROR $2 main contrib non-free" >"$d/apt/sources.list"
	: >"$d/apt/status"
	APT="-o Dir::Etc::SourceList=$d/apt/sources.list -o Dir::Etc::SourceParts=/nonexistent
 -o Dir::Etc::Preferences=$d/apt/etc/preferences -o Dir::Etc::PreferencesParts=$d/apt/etc/preferences.d
 -o Dir::State::Lists=$d/apt/lists -o Dir::State::status=$d/apt/status
 -o Dir::Cache=$d/apt/cache -o APT::Architecture=amd64 -o APT::Architectures=amd64
 -o Debug::NoLocking=1"
	# shellcheck disable=SC2086
	apt-get $APT -q update
}

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
[ -f "$KEYRING" ] || { echo "fetch-cuda: $KEYRING missing (apt-get install debian-archive-keyring)" >&2; exit 1; }
if [ ! -f "$DIR/nvrtc12/ok" ]; then
	private_apt nvrtc12 trixie
	# shellcheck disable=SC2086
	(cd "$DIR/nvrtc12/debs" && apt-get $APT -q download libnvrtc12 libnvrtc-builtins12.4)
	for f in "$DIR"/nvrtc12/debs/*.deb; do dpkg-deb -x "$f" "$DIR/nvrtc12"; done
	[ -f "$DIR/nvrtc12/usr/lib/x86_64-linux-gnu/libnvrtc.so.12" ] || { echo "fetch-cuda: libnvrtc.so.12 missing after extraction" >&2; exit 1; }
	rm -rf "$DIR/nvrtc12/debs" "$DIR/nvrtc12/apt"
	touch "$DIR/nvrtc12/ok"
fi
# And nvdisasm 12.4 from trixie's nvidia-cuda-toolkit (the one binary kept,
# under DIR/nvdisasm; the package is ~90 MB): make cuda-test reads the
# Hopper GEMM's SASS with it, make sass prints it.
if [ ! -x "$DIR/nvdisasm/nvdisasm" ]; then
	private_apt nvdisasm trixie
	# shellcheck disable=SC2086
	(cd "$DIR/nvdisasm/debs" && apt-get $APT -q download nvidia-cuda-toolkit)
	dpkg-deb -x "$DIR"/nvdisasm/debs/nvidia-cuda-toolkit_*.deb "$DIR/nvdisasm/x"
	mv "$DIR/nvdisasm/x/usr/bin/nvdisasm" "$DIR/nvdisasm/nvdisasm"
	rm -rf "$DIR/nvdisasm/debs" "$DIR/nvdisasm/apt" "$DIR/nvdisasm/x"
fi
if [ -f "$DIR/ok" ]; then touch "$DIR/ok"; exit 0; fi
private_apt . bookworm
# shellcheck disable=SC2086
(cd "$DIR/debs" && apt-get $APT -q download libcuda1 libnvrtc11.2 libnvrtc-builtins11.8)
mkdir -p "$DIR/root"
dpkg-deb -x "$DIR"/debs/libcuda1_*.deb "$DIR/root"
dpkg-deb -x "$DIR"/debs/libnvrtc11.2_*.deb "$DIR/root"
dpkg-deb -x "$DIR"/debs/libnvrtc-builtins11.8_*.deb "$DIR/root"
LIB=$(dirname "$(find "$DIR/root" -name 'libcuda.so.1' | head -1)")
[ -n "$LIB" ] && [ -e "$LIB/libcuda.so.1" ] || { echo "fetch-cuda: libcuda.so.1 missing after extraction" >&2; exit 1; }
rm -rf "$DIR/debs" "$DIR/apt/cache"
echo "$LIB" >"$DIR/libdir"
touch "$DIR/ok"
echo "fetch-cuda: NVRTC in $DIR/root/usr/lib/x86_64-linux-gnu, libcuda in $LIB"
