//go:build cuda

package gpu

import (
	"encoding/binary"
	"regexp"
	"strings"
	"testing"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm/hopper"
)

// TestLaunchParams: launchParams builds hopper_gemm's parameters in the
// order, sizes and alignments of the kernel's signature (read from
// hopper.Source), each from the field it names. A parameter added to the
// kernel but not to the launch (or in another place) would otherwise
// show only on a GPU, as wrong products or a fault. No GPU needed: make
// cuda-test runs it.
func TestLaunchParams(t *testing.T) {
	sig := regexp.MustCompile(`(?s)hopper_gemm\((.*?)\)\s*\{`).FindStringSubmatch(hopper.Source)
	if sig == nil {
		t.Fatal("no hopper_gemm signature in hopper.Source")
	}
	type param struct{ typ, name string }
	var params []param
	for _, p := range strings.Split(sig[1], ",") {
		f := strings.Fields(p)
		params = append(params, param{f[len(f)-2], f[len(f)-1]})
	}
	o := Operands{M: 11, N: 12, K: 13, OwnLo: 16, OwnRows: 17, ScaleA: 0x900, ScaleB: 0xa00, ScaleAOwn: 0xb00,
		Work: SplitKWork{Partials: 0xc00, Counts: 0xd00}}
	for i := range o.A {
		o.A[i], o.B[i], o.AOwn[i], o.C[i] = 1, 2, 3, 4
	}
	comm := Comm{Order: 0x200, Table: 0x300, Chunks: 14, Flags: 0x400, Status: 0x500, TimeoutNs: 0x600, RS: 0x700,
		RowsPerRank: 15, Start: 0x800, StartMask: 18, EarlyDependents: true, RSMaps: [][128]byte{{}, {5}, {6}}}
	// rs_maps: its first map (owner 0's) is zero; rs_tma: owners 1 and 2 have maps.
	want := map[string]uint64{"tma_a": 1, "tma_b": 2, "tma_a_own": 3, "tma_c": 4, "rs_maps": 0, "rs_tma": 0b110, "c_ptr": 0x100, "m": 11, "n": 12, "k": 13,
		"order_ptr": 0x200, "chunk_tab": 0x300, "nchunks": 14, "flags": 0x400, "status": 0x500, "timeout_ns": 0x600,
		"rs_tab": 0x700, "rows_per_rank": 15, "a_own_lo": 16, "a_own_rows": 17, "start_flags": 0x800, "start_mask": 18,
		"scale_a": 0x900, "scale_b": 0xa00, "scale_a_own": 0xb00, "sk_part": 0xc00, "sk_count": 0xd00, "sk_tiles": 19, "early_dependents": 1}
	blob, offsets := launchParams(o, cu.DevicePtr(0x100), comm, 19).Layout()
	if len(offsets) != len(params) {
		t.Fatalf("launchParams builds %d parameters, hopper_gemm takes %d", len(offsets), len(params))
	}
	for i, p := range params {
		size := map[string]int{"TensorMap": 128, "RSMaps": 128 * maxOwners, "u64": 8, "int": 4, "u32": 4}[p.typ]
		align := min(size, 64)
		w, ok := want[p.name]
		switch {
		case size == 0 || !ok:
			t.Fatalf("parameter %d, %s %s: not known to this test", i, p.typ, p.name)
		case offsets[i]%align != 0 || offsets[i]+size > len(blob) || (i+1 < len(offsets) && offsets[i]+size > offsets[i+1]):
			t.Errorf("%s %s at offset %d: not %d bytes at %d-byte alignment", p.typ, p.name, offsets[i], size, align)
			continue
		}
		var got uint64
		switch size {
		case 8:
			got = binary.LittleEndian.Uint64(blob[offsets[i]:])
		case 4:
			got = uint64(binary.LittleEndian.Uint32(blob[offsets[i]:]))
		default: // a tensor map: its first byte says which
			got = uint64(blob[offsets[i]])
		}
		if got != w {
			t.Errorf("%s %s = %#x, want %#x", p.typ, p.name, got, w)
		}
		if p.name == "rs_maps" && (blob[offsets[i]+128] != 5 || blob[offsets[i]+256] != 6) {
			t.Error("rs_maps: owner q's map is not at 128 q bytes")
		}
	}
}

// TestLaunchParamsPlainEnv: PlainLaunchEnv turns the dependent launch off
// with "1", keeps it with "" or "0", and refuses anything else by name.
func TestLaunchParamsPlainEnv(t *testing.T) {
	for _, c := range []struct {
		value string
		plain bool
		err   bool
	}{{"", false, false}, {"0", false, false}, {"1", true, false}, {"yes", false, true}} {
		t.Setenv(PlainLaunchEnv, c.value)
		plain, err := plainLaunchFromEnv()
		if plain != c.plain || (err != nil) != c.err || (err != nil && !strings.Contains(err.Error(), PlainLaunchEnv)) {
			t.Errorf("%s=%q: plain %v, error %v", PlainLaunchEnv, c.value, plain, err)
		}
	}
}
