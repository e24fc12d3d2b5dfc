#!/bin/sh
# find-python.sh [MODULE...]: prints the path of a Python 3 that imports
# every MODULE (default: what the plugin SDK and python/tests import), so
# that `make test` needs no PYTHON=... on a fresh machine.
#
# It tries $PYTHON alone when set; otherwise every python3 on PATH, then
# /usr/bin/python3 and /usr/local/bin/python3. When none can, it installs
# Debian's packages for the modules if it runs as root with apt-get (and
# SYMMTUNE_INSTALL is not 0), then tries /usr/bin/python3 again. Failing
# that it prints one line saying what to install and exits 1.
#
# Only the path goes to stdout; apt-get's progress goes to stderr.
set -u

[ $# -gt 0 ] || set -- grpc google.protobuf numpy pytest cryptography

# deb MODULE / pip MODULE: the package that provides MODULE.
deb() {
	case $1 in
	grpc) echo python3-grpcio ;;
	grpc_tools) echo python3-grpc-tools ;;
	google.protobuf) echo python3-protobuf ;;
	flake8 | mypy) echo "$1" ;;
	*) echo "python3-$1" ;;
	esac
}
pip() {
	case $1 in
	grpc) echo grpcio ;;
	grpc_tools) echo grpcio-tools ;;
	google.protobuf) echo protobuf ;;
	*) echo "$1" ;;
	esac
}

modules=$(IFS=,; echo "$*")

# works PATH-OR-NAME: prints the interpreter's path if it imports them all.
works() {
	p=$(command -v "$1" 2>/dev/null) || return 1
	"$p" -c "import sys; assert sys.version_info >= (3, 9); import $modules" >/dev/null 2>&1 || return 1
	echo "$p"
}

# candidates: each python3 on PATH in order, then the system ones.
candidates() {
	if [ -n "${PYTHON:-}" ]; then
		echo "$PYTHON"
		return
	fi
	old_ifs=$IFS
	IFS=:
	for d in $PATH; do
		[ -x "${d:-.}/python3" ] && echo "${d:-.}/python3"
	done
	IFS=$old_ifs
	echo /usr/bin/python3
	echo /usr/local/bin/python3
}

probe() {
	for c in $(candidates); do
		works "$c" && return 0
	done
	return 1
}

probe && exit 0

debs=$(for m in "$@"; do deb "$m"; done)
debs=$(echo $debs)
pips=$(for m in "$@"; do pip "$m"; done)
pips=$(echo $pips)
if [ -z "${PYTHON:-}" ] && [ "${SYMMTUNE_INSTALL:-1}" != 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "find-python: no Python imports $*; installing Debian's $debs" >&2
	# openssl: the Python SDK's certificate test compares against it.
	extra=""
	command -v openssl >/dev/null 2>&1 || extra=openssl
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 $debs $extra; } >&2 &&
		works /usr/bin/python3 && exit 0
fi

if [ -n "${PYTHON:-}" ]; then
	echo "find-python: PYTHON=$PYTHON cannot import $*: install $pips into it (pip install $pips), or unset PYTHON" >&2
else
	echo "find-python: no Python 3.9+ imports $*: install them (Debian: apt-get install $debs; or pip install $pips), or set PYTHON=/path/to/python3" >&2
fi
exit 1
