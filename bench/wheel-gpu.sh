#!/bin/bash
# bench/wheel-gpu.sh WHEEL: issue 58's check of the platform wheel on a GPU
# machine without Go (torch installed there). Build the wheel where Go is
# (`make wheel` writes bin/symmtune-*-py3-none-linux_x86_64.whl), carry it
# and this checkout to the GPU machine, and run from the checkout:
#
#   bash bench/wheel-gpu.sh bin/symmtune-0.1.0-py3-none-linux_x86_64.whl
#
# It installs the wheel alone (--no-deps --no-index) into a venv made with
# --system-site-packages (so the machine's torch is seen), then, with the
# venv's `symmtune` command (the Go host bundled in the wheel):
#   1. symmtune plugins --backend cuda                (the bundled CUDA plugins)
#   2. symmtune search --backend cuda --kernel agmm --world 1 --shape SHAPE
#      --dtype DTYPE --budget-time BUDGET_TIME       (defaults m=8192,n=3584,k=8192,
#      bf16, 60s), into a cache of its own
#   3. symmtune lookup of the same job
#   4. symmtune.torch from the wheel, in a world-1 process group: the
#      config its first all_gather_matmul at that shape runs, which must be
#      the search's winner (source "tuned", or "nearest" where the runtime
#      asks for a row bucket's top), and the product's relative error against
#      a float32 torch.mm.
# Writes $OUT/wheel-gpu/ (OUT default bench/out): machine.txt, each step's
# output, the cache and the trial log; and summary.md, the record for
# bench/results. Exit 0 only when every step passed.
set -uo pipefail
WHL=${1:?usage: bench/wheel-gpu.sh WHEEL}
[ -f "$WHL" ] || { echo "wheel-gpu: no wheel $WHL (make wheel writes it into bin/)" >&2; exit 2; }
WHL=$(cd "$(dirname "$WHL")" && pwd)/$(basename "$WHL")
OUT=${OUT:-bench/out}
LOGS=$(mkdir -p "$OUT/wheel-gpu" && cd "$OUT/wheel-gpu" && pwd)
SHAPE=${SHAPE:-m=8192,n=3584,k=8192}
DTYPE=${DTYPE:-bf16}
BUDGET_TIME=${BUDGET_TIME:-60s}
PY=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
# Nothing from a checkout: the package, the library and the host all come from the wheel.
unset PYTHONPATH SYMMTUNE_LIB SYMMTUNE_PLUGIN_DIR SYMMTUNE_CACHE
cache=$LOGS/configs.toml
rm -f "$cache" "$LOGS/search.jsonl"
{
	date -u
	echo "go on PATH: $(command -v go || echo none)"
	echo "wheel: $(basename "$WHL") $(du -k "$WHL" | cut -f1) KiB"
	"$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
	nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
} >"$LOGS/machine.txt" 2>&1
cat "$LOGS/machine.txt"

fail=0
step() { # step NAME CMD...: runs CMD, its output into $LOGS/NAME.txt and here
	echo "== $1: ${*:2}"
	local t0=$SECONDS
	"${@:2}" 2>&1 | tee "$LOGS/$1.txt"
	local rc=${PIPESTATUS[0]}
	echo "-- $1: exit $rc, $((SECONDS - t0)) s" | tee -a "$LOGS/$1.txt"
	[ "$rc" -eq 0 ] || fail=1
	return "$rc"
}

step install "$PY" -m venv --system-site-packages "$tmp/venv" &&
	step pip "$tmp/venv/bin/pip" install --no-deps --no-index "$WHL" || { echo "wheel-gpu: install failed" >&2; exit 1; }
# Where $PY is itself a venv's (torch installed there), --system-site-packages
# reaches only its base Python: a .pth file adds $PY's own site-packages
# after the venv's, so torch is seen and symmtune still comes from the wheel.
"$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/outer-site.pth"
export PATH="$tmp/venv/bin:$PATH"
echo "symmtune command: $(command -v symmtune)"

job=(--backend cuda --kernel agmm --world 1 --shape "$SHAPE" --dtype "$DTYPE" --cache "$cache")
step plugins symmtune plugins --backend cuda
step search symmtune search "${job[@]}" --budget-time "$BUDGET_TIME" --log "$LOGS/search.jsonl"
step lookup symmtune lookup "${job[@]}"

# symmtune.torch from the venv (run from $tmp, so no checkout's python/ is imported).
cat >"$tmp/torch_reads.py" <<'PYEOF'
import os
import socket
import sys

import torch
import torch.distributed as dist

import symmtune
import symmtune.torch as st
from symmtune import _torch_gemm

cache, shape, dtype = sys.argv[1], dict(kv.split("=") for kv in sys.argv[2].split(",")), sys.argv[3]
m, n, k = (int(shape[d]) for d in "mnk")
print("symmtune package:", os.path.dirname(symmtune.__file__))
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
torch.cuda.set_device(0)
dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1,
                        device_id=torch.device("cuda", 0))
tdt = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
entry = symmtune.lookup("agmm", world=1, dtype=dtype, shape={"m": m, "n": n, "k": k}, cache=cache)
print("symmtune.lookup:", entry.config, "exact" if entry.exact else "nearest")
g = torch.Generator(device="cuda").manual_seed(0)
a = torch.randn(m, k, device="cuda", dtype=tdt, generator=g)
b = torch.randn(k, n, device="cuda", dtype=tdt, generator=g)
c = st.all_gather_matmul(a, b, cache=cache)
torch.cuda.synchronize()
ref = a.float() @ b.float()
rel = ((c.float() - ref).norm() / ref.norm()).item()
# The op the call opened: _torch_gemm.opened where the runtime has it (ops
# per row bucket), else its table of one op per problem.
if hasattr(_torch_gemm, "opened"):
    pipes = _torch_gemm.opened("agmm", m, n, k)
else:
    pipes = [p for key, p in _torch_gemm._pipes.items() if key[0] == "agmm"]
pipe = pipes[-1]
print("symmtune.torch ran:", dict(pipe.choice.config), "source", pipe.choice.source)
print(f"relative error vs float32 mm: {rel:.3g}")
# "tuned" (or "nearest" where the runtime asks for a row bucket's top m):
# either way the cache's entry, not the default.
ok = pipe.choice.source in ("tuned", "nearest") and dict(pipe.choice.config) == entry.config and rel < 2e-2
print("torch reads the winner:", "yes" if ok else "NO")
dist.destroy_process_group()
sys.exit(0 if ok else 1)
PYEOF
(cd "$tmp" && step torch "$tmp/venv/bin/python" "$tmp/torch_reads.py" "$cache" "$SHAPE" "$DTYPE") || fail=1

{
	echo "# Platform wheel on a GPU machine without Go: search --backend cuda, then symmtune.torch reads the winner"
	echo
	echo "\`bash bench/wheel-gpu.sh $(basename "$WHL")\` (issue 58), $(date -u +%F)."
	echo
	echo '```'
	cat "$LOGS/machine.txt"
	echo '```'
	for s in plugins search lookup torch; do
		echo
		echo "## $s"
		echo
		echo '```'
		grep -v '^\s*$' "$LOGS/$s.txt" | tail -n 25
		echo '```'
	done
} >"$LOGS/summary.md"
echo "wrote $LOGS/summary.md"
[ "$fail" -eq 0 ] && echo "wheel-gpu: every step passed" || echo "wheel-gpu: a step failed (see above)"
exit "$fail"
