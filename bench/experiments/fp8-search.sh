#!/bin/sh
# fp8-search.sh: FP8 agmm and matmulrs searched on 2 GPUs (issue 30), every
# trial verified against the float64 reference, into one cache ($OUT/fp8.toml)
# that bench/torch-fp8.sh's bench reads. First the small shape's four jobs
# (budget SMALL_BUDGET), then the two large shapes' eight (BUDGET).
# JOBS="kernel dtype shape budget;..." runs those jobs instead, and EXTRA adds
# flags to every search (e.g. --no-transfer).
# Run from the checkout after `tar xzf .gpu/bins.tgz -C /tmp`.
out=${OUT:-/tmp/fp8-search}
BIN=${BIN:-/tmp/bin}
mkdir -p "$out"
search() { # kernel dtype shape budget
	start=$(date +%s)
	name=$(printf '%s-%s-%s' "$1" "$2" "$3" | tr -c 'a-zA-Z0-9_.-' '_') # the device runner returns plain names only
	timeout 200 "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --world 2 --cache "$out/fp8.toml" \
		--log "$out/trials.jsonl" --kernel "$1" --dtype "$2" --shape "$3" --budget-trials "$4" ${EXTRA:-} \
		> "$out/search-$name.txt" 2>&1
	echo "$1 $2 $3: rc $? in $(( $(date +%s) - start )) s; $(grep -m1 '^winner:' "$out/search-$name.txt" | cut -c1-220)"
}
if [ -n "${JOBS:-}" ]; then
	echo "$JOBS" | tr ';' '\n' | while read -r k d s b; do [ -n "$k" ] && search "$k" "$d" "$s" "$b"; done
	exit 0
fi
for k in agmm matmulrs; do for d in e4m3 e4m3_row; do
	search $k $d m=4096,n=1792,k=4096 ${SMALL_BUDGET:-16}
done; done
for s in ${SHAPES:-m=8192,n=3584,k=8192 m=16384,n=3584,k=8192}; do
	for k in agmm matmulrs; do for d in e4m3 e4m3_row; do
		search $k $d $s ${BUDGET:-30}
	done; done
done
