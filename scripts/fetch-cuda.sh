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
set -eu
DIR=${1:-.cuda}
if [ -f "$DIR/ok" ]; then exit 0; fi
mkdir -p "$DIR/apt/lists/partial" "$DIR/apt/cache/archives/partial" "$DIR/apt/etc/preferences.d" "$DIR/debs"
DIR=$(cd "$DIR" && pwd)
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$KEYRING" ] || { echo "fetch-cuda: $KEYRING missing (apt-get install debian-archive-keyring)" >&2; exit 1; }
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cat >"$DIR/apt/sources.list" <<SRC
deb [signed-by=$KEYRING] $MIRROR bookworm main contrib non-free
SRC
: >"$DIR/apt/status"
APT="-o Dir::Etc::SourceList=$DIR/apt/sources.list -o Dir::Etc::SourceParts=/nonexistent
 -o Dir::Etc::Preferences=$DIR/apt/etc/preferences -o Dir::Etc::PreferencesParts=$DIR/apt/etc/preferences.d
 -o Dir::State::Lists=$DIR/apt/lists -o Dir::State::status=$DIR/apt/status
 -o Dir::Cache=$DIR/apt/cache -o APT::Architecture=amd64 -o APT::Architectures=amd64
 -o Debug::NoLocking=1"
# shellcheck disable=SC2086
apt-get $APT -q update
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
