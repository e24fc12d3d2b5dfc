//go:build cuda && gpu

package cublaslt

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/symmtune/symmtune/cuda/cu"
)

// TestAlgosMatchPython: for the products symmtune's pipelines run, the
// heuristic ranks the same algorithms, in the same order, for this binding
// and for python/symmtune/_cublaslt.py in a torch process (what
// symmtune.torch runs), so a tuned algo index names one algorithm in both.
// It needs a GPU and a Python with torch: SYMMTUNE_TEST_PYTHON names that
// Python (bench/lt-parity.sh sets it); otherwise it is skipped, as it is
// where cuda/cu finds no driver or device. The gpu tag puts it with the GPU
// tests scripts/gpu-bundle.sh builds.
func TestAlgosMatchPython(t *testing.T) {
	python := os.Getenv("SYMMTUNE_TEST_PYTHON")
	if python == "" {
		t.Skip("SYMMTUNE_TEST_PYTHON is not set")
	}
	runtime.LockOSThread()
	if _, err := cu.Device(0).MakeContext(cu.SchedAuto); err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	sms, err := cu.Device(0).Attribute(cu.MultiprocessorCount)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandle()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	type query struct {
		M, N, K, Batch   int
		StrideA, StrideD int64
		SMTarget         int
		DType            string
	}
	var qs []query
	for _, d := range [][3]int{{8192, 3584, 8192}, {16384, 3584, 8192}, {4096, 1792, 4096}} {
		m, n, k := d[0], d[1], d[2]
		for _, rows := range []int{m / 2, m / 4, m / 16} { // a rank's rows, cut into chunks, on 2 GPUs
			for _, batch := range []int{1, 2} {
				for _, reserve := range []int{0, 16} {
					st := 0
					if reserve > 0 {
						st = sms - reserve
					}
					qs = append(qs, query{rows, n, k, batch, int64(m/2) * int64(k), int64(m/2) * int64(n), st, "bf16"})
				}
			}
		}
	}
	qs = append(qs, query{4096, 1792, 4096, 1, 0, 0, 0, "f16"})
	want := make([][]string, len(qs))
	for i, q := range qs {
		dt, err := DTypeOf(q.DType)
		if err != nil {
			t.Fatal(err)
		}
		p, err := h.Plan(Matmul{M: q.M, N: q.N, K: q.K, DType: dt, BT: true, Batch: q.Batch, StrideA: q.StrideA,
			StrideD: q.StrideD, SMCountTarget: q.SMTarget, Workspace: 32 << 20})
		if err != nil {
			t.Fatal(err)
		}
		for a := 0; a < p.Algos(); a++ {
			want[i] = append(want[i], p.AlgoKey(a))
		}
		p.Close()
	}
	in, err := json.Marshal(qs)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../python/tests/lt_answers.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Dir(filepath.Dir(script)))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	var got struct {
		Version int        `json:"version"`
		Keys    [][]string `json:"keys"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python answer: %v", err)
	}
	goVersion, _ := Version()
	lib, _ := Load()
	t.Logf("Go: %s (version %d); Python in torch: version %d; %d products", lib, goVersion, got.Version, len(qs))
	if len(got.Keys) != len(qs) {
		t.Fatalf("python answered %d products of %d", len(got.Keys), len(qs))
	}
	bad := 0
	for i, q := range qs {
		if !equal(want[i], got.Keys[i]) {
			bad++
			t.Errorf("%+v: Go ranks %d algorithms, Python %d; first differing at %d", q, len(want[i]), len(got.Keys[i]), firstDiff(want[i], got.Keys[i]))
		}
	}
	if bad > 0 && goVersion != got.Version {
		t.Logf("the libraries differ (%d, %d): set SYMMTUNE_CUBLASLT so the plugins load torch's copy", goVersion, got.Version)
	}
}

func equal(a, b []string) bool { return firstDiff(a, b) < 0 }

func firstDiff(a, b []string) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}
