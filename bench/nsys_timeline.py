"""Print one call of a GPU GEMM pipeline from an Nsight Systems trace.

    nsys stats -r cuda_gpu_trace -f csv -o T REPORT.nsys-rep
    python3 bench/nsys_timeline.py T_cuda_gpu_trace.csv [GEMMS]

A call is what runs between two symm_barrier kernels of a device (Team.Time
puts one before every timed call and the pipeline ends with one). For each
device this prints the last call that ran GEMMS products (any kernel other
than symmtune's own helpers; all calls when GEMMS is omitted, the last one
shown): start (µs from the call's first operation), duration, stream, name,
and for copies the bytes and GB/s. It answers where a call's time goes:
products slower than alone, copies slower than the link, gaps.
"""
import csv, sys

OWN = ("symm_barrier", "fill", "check_rows", "count_bad", "copy_chunk", "reduce_chunk")


def col(header, *keys):
    for i, h in enumerate(header):
        if all(k.lower() in h.lower() for k in keys):
            return i
    raise SystemExit(f"no column with {keys} in {header}")


def main(path, gemms):
    rows = list(csv.reader(open(path)))
    h = rows[0]
    ci = dict(start=col(h, "Start"), dur=col(h, "Duration"), dev=col(h, "Device"), strm=col(h, "Strm"),
              name=col(h, "Name"))
    try:
        ci["bytes"] = col(h, "Bytes")
    except SystemExit:
        ci["bytes"] = None
    by_dev = {}
    for r in rows[1:]:
        if len(r) < len(h):
            continue
        by_dev.setdefault(r[ci["dev"]], []).append(r)
    for dev, evs in sorted(by_dev.items()):
        evs.sort(key=lambda r: int(r[ci["start"]]))
        bars = [i for i, r in enumerate(evs) if r[ci["name"]].startswith("symm_barrier")]
        calls = [evs[a + 1:b + 1] for a, b in zip(bars, bars[1:])]
        def nprod(call):
            return sum(1 for r in call if not r[ci["name"]].startswith(OWN) and "memcpy" not in r[ci["name"]].lower()
                       and "memset" not in r[ci["name"]].lower())
        pick = [c for c in calls if gemms is None or nprod(c) == gemms]
        if not pick:
            print(f"device {dev}: no call with {gemms} products")
            continue
        call = pick[-1]
        t0 = int(call[0][ci["start"]])
        end = max(int(r[ci["start"]]) + int(r[ci["dur"]]) for r in call)
        print(f"== device {dev}: call of {nprod(call)} products, {(end - t0) / 1000:.1f} µs ({len(pick)} such calls)")
        for r in call:
            s, d = (int(r[ci["start"]]) - t0) / 1000, int(r[ci["dur"]]) / 1000
            extra = ""
            if ci["bytes"] is not None and r[ci["bytes"]]:
                mb = float(r[ci["bytes"]])
                if "(MB)" not in h[ci["bytes"]]:
                    mb /= 1e6
                extra = f" {mb:.1f} MB {mb / d * 1000:.0f} GB/s" if d > 0 else ""
            print(f"{s:9.1f} {d:8.1f} s{r[ci['strm']]:>3} {r[ci['name']][:60]}{extra}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)
