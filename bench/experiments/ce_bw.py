"""Copy-engine NVLink bandwidth between the GPUs of one machine (one process).

    python3 bench/experiments/ce_bw.py

Measures, with torch's peer copies (cudaMemcpyPeerAsync, copy engines, no
SMs), GB/s leaving each GPU for: one direction 0->1, both directions 0<->1,
and all-to-all among the first 2 and all GPUs (every GPU sending to every
other at once on its own streams). It tells whether the SM-driven kernels'
~340-360 GB/s is the link's practical ceiling on this machine.
"""
import time
import torch

N = 256 << 20  # bytes per copy


def run(pairs, iters=10):
    devs = sorted({i for p in pairs for i in p})
    src = {i: torch.randint(0, 255, (N,), dtype=torch.uint8, device=i) for i in devs}
    dst = {p: torch.empty(N, dtype=torch.uint8, device=p[1]) for p in pairs}
    st = {p: torch.cuda.Stream(device=p[0]) for p in pairs}

    def once():
        for p in pairs:
            with torch.cuda.stream(st[p]):
                dst[p].copy_(src[p[0]], non_blocking=True)

    def sync():
        for i in devs:
            torch.cuda.synchronize(i)

    once(); once(); sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        once()
    sync()
    dt = (time.perf_counter() - t0) / iters
    out = {i: sum(1 for p in pairs if p[0] == i) for i in devs}
    per_gpu = max(out.values()) * N / dt / 1e9
    return per_gpu


def main():
    n = torch.cuda.device_count()
    print("devices", n, "peer 0->1", torch.cuda.can_device_access_peer(0, 1))
    tests = [("uni 0->1", [(0, 1)]), ("bidir 0<->1", [(0, 1), (1, 0)])]
    for w in sorted({2, n}):
        tests.append((f"all-to-all {w} GPUs", [(i, j) for i in range(w) for j in range(w) if i != j]))
    for name, pairs in tests:
        print(f"ce,{name},{run(pairs):.1f} GB/s out per GPU", flush=True)


if __name__ == "__main__":
    main()
