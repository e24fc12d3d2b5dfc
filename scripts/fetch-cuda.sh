#!/bin/sh
# fetch-cuda.sh DIR: put the CUDA 11.8 driver-API headers (cuda.h, nvrtc.h,
# cudaTypedefs.h), the libcuda link stub and NVRTC 11.8 (libnvrtc.so.11.2,
# for compiling the kernels in tests without a GPU) under DIR, without
# installing anything system-wide.
#
# Why 11.8: gorgonia.org/cu v0.9.6 does not compile against CUDA 13 headers
# (cuCtxCreate changed signature), and Debian bookworm's non-free
# nvidia-cuda-dev (11.8.89) is the newest packaged set it builds with. The
# resulting binaries run on driver 580 (CUDA 13) machines: the driver API is
# backward compatible. A private apt configuration (sources, lists, cache)
# lives in DIR/apt, so the host's apt state is not touched and no root is
# needed. The result is cached: a second run with DIR/ok present does nothing.
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
if [ -f "$DIR/ok" ]; then touch "$DIR/ok"; exit 0; fi
private_apt . bookworm
# shellcheck disable=SC2086
(cd "$DIR/debs" && apt-get $APT -q download nvidia-cuda-dev libcuda1 libnvrtc11.2 libnvrtc-builtins11.8)
mkdir -p "$DIR/root"
dpkg-deb --fsys-tarfile "$DIR"/debs/nvidia-cuda-dev_*.deb |
	tar -x -C "$DIR/root" ./usr/include/cuda.h ./usr/include/nvrtc.h ./usr/include/cudaTypedefs.h ./usr/include/cudaProfilerTypedefs.h 2>/dev/null ||
	dpkg-deb --fsys-tarfile "$DIR"/debs/nvidia-cuda-dev_*.deb | tar -x -C "$DIR/root" ./usr/include/cuda.h ./usr/include/nvrtc.h ./usr/include/cudaTypedefs.h
dpkg-deb -x "$DIR"/debs/libcuda1_*.deb "$DIR/root"
dpkg-deb -x "$DIR"/debs/libnvrtc11.2_*.deb "$DIR/root"
dpkg-deb -x "$DIR"/debs/libnvrtc-builtins11.8_*.deb "$DIR/root"
LIB=$(dirname "$(find "$DIR/root" -name 'libcuda.so*' | head -1)")
[ -f "$DIR/root/usr/include/cuda.h" ] && [ -n "$LIB" ] || { echo "fetch-cuda: headers or libcuda missing after extraction" >&2; exit 1; }
# The package ships libcuda.so.1 (and a versioned file); the linker wants libcuda.so.
[ -e "$LIB/libcuda.so" ] || ln -s "$(basename "$(ls "$LIB"/libcuda.so.1 2>/dev/null || ls "$LIB"/libcuda.so.* | head -1)")" "$LIB/libcuda.so"
# The .debs are large (nvidia-cuda-dev ~774 MB); keep only what the build uses.
rm -rf "$DIR/debs" "$DIR/apt/cache"
echo "$LIB" >"$DIR/libdir"
touch "$DIR/ok"
echo "fetch-cuda: headers in $DIR/root/usr/include, libcuda in $LIB"
