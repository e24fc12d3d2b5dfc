//go:build cuda

// Package cublaslt runs dense matrix products through NVIDIA's cuBLASLt,
// loaded at run time with dlopen (the newest libcublasLt.so.N present, or
// $SYMMTUNE_CUBLASLT), so that the build links against no toolkit and one
// binary works with the CUDA 12 and 13 libraries. It declares the handful of
// entry points it uses itself, as cuda/nvrtc does: their ABI has been stable
// since CUDA 11.
//
// It offers exactly what symmtune's GEMM pipelines need: row-major
// D[M,N] = A[M,K]·B[K,N] with fp32 accumulation, in bf16 or f16, or with
// FP8 (e4m3) inputs, bf16 output and fp32 dequantization scales, one per
// operand or one per row of A and per column of D (see Matmul and
// RunScaled); B stored [K,N] or [N,K] (a torch.nn.Linear weight's layout),
// any leading dimensions, an SM-count target (to leave SMs free for
// communication kernels), and a choice among the algorithms cuBLASLt's
// heuristic ranks for the shape, which the tuner searches over.
package cublaslt

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

// Declarations from cublasLt.h, library_types.h and cublas_api.h: opaque
// handles, the enum values used, and the 96-byte heuristic result. The
// values were read from a CUDA 13 cublasLt.h (the one with
// CUBLASLT_MATMUL_DESC_ALPHA_BATCH_STRIDE = 39) and from cudarc's bindgen
// output of the CUDA 12.9 and 13.0 headers; those this file used before FP8
// are unchanged since CUDA 11.8. The scale attributes (17, 18) and
// FAST_ACCUM (25) date from 11.8, the scale modes (31, 32) from 12.8, and
// OUTER_VEC_32F from 12.9.
typedef void* lt_handle;
typedef void* lt_desc;
typedef void* lt_layout;
typedef void* lt_pref;
typedef struct { uint64_t data[8]; } lt_algo;
typedef struct {
	lt_algo algo;
	size_t workspaceSize;
	int state;
	float wavesCount;
	int reserved[4];
} lt_heur;

enum {
	LT_R_16F = 2, LT_R_32F = 0, LT_R_16BF = 14, LT_R_8F_E4M3 = 28, // cudaDataType
	LT_COMPUTE_32F = 68,                          // cublasComputeType_t
	// cublasLtMatmulDescAttributes_t
	LT_DESC_TRANSA = 3,            // int32_t
	LT_DESC_SM_COUNT_TARGET = 15,  // int32_t
	LT_DESC_A_SCALE_POINTER = 17,  // const void*
	LT_DESC_B_SCALE_POINTER = 18,  // const void*
	LT_DESC_FAST_ACCUM = 25,       // int8_t
	LT_DESC_A_SCALE_MODE = 31,     // int32_t (cublasLtMatmulMatrixScale_t)
	LT_DESC_B_SCALE_MODE = 32,     // int32_t
	LT_SCALE_SCALAR_32F = 0,       // cublasLtMatmulMatrixScale_t: the default
	LT_SCALE_OUTER_VEC_32F = 3,
	LT_OP_T = 1,                                  // cublasOperation_t
	LT_PREF_MAX_WORKSPACE_BYTES = 1,              // cublasLtMatmulPreferenceAttributes_t
	LT_LAYOUT_BATCH_COUNT = 5,                    // cublasLtMatrixLayoutAttribute_t
	LT_LAYOUT_STRIDED_BATCH_OFFSET = 6,
};

// LT_DUMMY_SCALE stands in for the scale pointers while the heuristic
// ranks algorithms: it reads no data, but it refuses a null pointer with
// a non-scalar scale mode ("requires a custom pointer for A scale",
// NVIDIA/CUDALibrarySamples#274). RunScaled sets the real ones. Should the
// heuristic infer alignment from it (1 MiB), a row-scale vector only 4-byte
// aligned (a chunk starting at an odd row) might not suit the algorithms
// it ranked; the GPU test tries that.
#define LT_DUMMY_SCALE ((const void*)(uintptr_t)0x100000)

typedef int (*create_t)(lt_handle*);
typedef int (*destroy_t)(lt_handle);
typedef size_t (*version_t)(void);
typedef const char* (*status_name_t)(int);
typedef int (*desc_create_t)(lt_desc*, int, int);
typedef int (*desc_destroy_t)(lt_desc);
typedef int (*desc_set_t)(lt_desc, int, const void*, size_t);
typedef int (*layout_create_t)(lt_layout*, int, uint64_t, uint64_t, int64_t);
typedef int (*layout_destroy_t)(lt_layout);
typedef int (*layout_set_t)(lt_layout, int, const void*, size_t);
typedef int (*pref_create_t)(lt_pref*);
typedef int (*pref_destroy_t)(lt_pref);
typedef int (*pref_set_t)(lt_pref, int, const void*, size_t);
typedef int (*heuristic_t)(lt_handle, lt_desc, lt_layout, lt_layout, lt_layout, lt_layout, lt_pref, int, lt_heur*, int*);
typedef int (*matmul_t)(lt_handle, lt_desc, const void*, const void*, lt_layout, const void*, lt_layout,
                        const void*, const void*, lt_layout, void*, lt_layout, const lt_algo*, void*, size_t, void*);
typedef int (*check_t)(lt_handle, lt_desc, lt_layout, lt_layout, lt_layout, lt_layout, const lt_algo*, lt_heur*);

static struct {
	void* lib;
	create_t create; destroy_t destroy; version_t version; status_name_t status_name;
	desc_create_t desc_create; desc_destroy_t desc_destroy; desc_set_t desc_set;
	layout_create_t layout_create; layout_destroy_t layout_destroy; layout_set_t layout_set;
	pref_create_t pref_create; pref_destroy_t pref_destroy; pref_set_t pref_set;
	heuristic_t heuristic; matmul_t matmul; check_t check;
} lt;

// lt_open loads name: 0 on success, 1 when the library is missing, 2 when a
// symbol is.
static int lt_open(const char* name) {
	void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) return 1;
	lt.create = (create_t)dlsym(h, "cublasLtCreate");
	lt.destroy = (destroy_t)dlsym(h, "cublasLtDestroy");
	lt.version = (version_t)dlsym(h, "cublasLtGetVersion");
	lt.status_name = (status_name_t)dlsym(h, "cublasLtGetStatusName");
	lt.desc_create = (desc_create_t)dlsym(h, "cublasLtMatmulDescCreate");
	lt.desc_destroy = (desc_destroy_t)dlsym(h, "cublasLtMatmulDescDestroy");
	lt.desc_set = (desc_set_t)dlsym(h, "cublasLtMatmulDescSetAttribute");
	lt.layout_create = (layout_create_t)dlsym(h, "cublasLtMatrixLayoutCreate");
	lt.layout_destroy = (layout_destroy_t)dlsym(h, "cublasLtMatrixLayoutDestroy");
	lt.layout_set = (layout_set_t)dlsym(h, "cublasLtMatrixLayoutSetAttribute");
	lt.pref_create = (pref_create_t)dlsym(h, "cublasLtMatmulPreferenceCreate");
	lt.pref_destroy = (pref_destroy_t)dlsym(h, "cublasLtMatmulPreferenceDestroy");
	lt.pref_set = (pref_set_t)dlsym(h, "cublasLtMatmulPreferenceSetAttribute");
	lt.heuristic = (heuristic_t)dlsym(h, "cublasLtMatmulAlgoGetHeuristic");
	lt.matmul = (matmul_t)dlsym(h, "cublasLtMatmul");
	lt.check = (check_t)dlsym(h, "cublasLtMatmulAlgoCheck");
	if (!lt.create || !lt.destroy || !lt.version || !lt.status_name || !lt.desc_create || !lt.desc_destroy ||
	    !lt.desc_set || !lt.layout_create || !lt.layout_destroy || !lt.layout_set || !lt.pref_create || !lt.pref_destroy ||
	    !lt.pref_set || !lt.heuristic || !lt.matmul || !lt.check) {
		dlclose(h);
		return 2;
	}
	lt.lib = h;
	return 0;
}

static size_t lt_version(void) { return lt.version(); }
static const char* lt_status(int s) { return lt.status_name(s); }
static int lt_create(lt_handle* h) { return lt.create(h); }
static int lt_destroy(lt_handle h) { return lt.destroy(h); }
static int lt_layout_destroy(lt_layout l) { return lt.layout_destroy(l); }
static int lt_desc_destroy(lt_desc d) { return lt.desc_destroy(d); }

// lt_batch makes l a strided batch of count matrices stride elements apart.
static int lt_batch(lt_layout l, int32_t count, int64_t stride) {
	int r = lt.layout_set(l, LT_LAYOUT_BATCH_COUNT, &count, sizeof(count));
	return r ? r : lt.layout_set(l, LT_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
}

// lt_scales points the descriptor's A and B scales at a and b.
static int lt_scales(lt_desc desc, const void* a, const void* b) {
	int r = lt.desc_set(desc, LT_DESC_A_SCALE_POINTER, &a, sizeof(a));
	return r ? r : lt.desc_set(desc, LT_DESC_B_SCALE_POINTER, &b, sizeof(b));
}

// lt_plan builds the descriptors of a column-major D[rows,cols] =
// op(A)[rows,inner]·B[inner,cols], batch times (B and D strided by strideB
// and strideD elements, A shared), op(A) being A, or with transA Aᵀ of an A
// stored [inner,rows], A and B of type in, C and D of type out, and asks the
// heuristic for up to *n algorithms (on return *n holds how many it gave;
// *n = 0 asks for none: the descriptors only).
// scaled (FP8) sets the scale pointers to a stand-in, the scale modes to
// scaleMode when it is not the default, and fast accumulation, so that the
// heuristic ranks for what will run.
static int lt_plan(lt_handle h, int in, int out, uint64_t rows, uint64_t cols, uint64_t inner, int32_t transA,
                   int64_t lda, int64_t ldb, int64_t ldd, int32_t batch, int64_t strideB, int64_t strideD,
                   int32_t smTarget, int32_t scaled, int32_t scaleMode, int8_t fastAccum, size_t workspace,
                   lt_desc* desc, lt_layout* la, lt_layout* lb, lt_layout* ld, lt_heur* heur, int* n) {
	*desc = 0; *la = 0; *lb = 0; *ld = 0;
	int r = lt.desc_create(desc, LT_COMPUTE_32F, LT_R_32F);
	if (r) return r;
	if (smTarget > 0 && (r = lt.desc_set(*desc, LT_DESC_SM_COUNT_TARGET, &smTarget, sizeof(smTarget)))) return r;
	int32_t op = LT_OP_T;
	if (transA && (r = lt.desc_set(*desc, LT_DESC_TRANSA, &op, sizeof(op)))) return r;
	if (scaled) {
		if ((r = lt_scales(*desc, LT_DUMMY_SCALE, LT_DUMMY_SCALE))) return r;
		// Left unset when scalar, so that libraries before 12.8 (which
		// lack the attribute) still take tensor-scaled products.
		if (scaleMode != LT_SCALE_SCALAR_32F) {
			if ((r = lt.desc_set(*desc, LT_DESC_A_SCALE_MODE, &scaleMode, sizeof(scaleMode)))) return r;
			if ((r = lt.desc_set(*desc, LT_DESC_B_SCALE_MODE, &scaleMode, sizeof(scaleMode)))) return r;
		}
		if ((r = lt.desc_set(*desc, LT_DESC_FAST_ACCUM, &fastAccum, sizeof(fastAccum)))) return r;
	}
	if ((r = transA ? lt.layout_create(la, in, inner, rows, lda) : lt.layout_create(la, in, rows, inner, lda))) return r;
	if ((r = lt.layout_create(lb, in, inner, cols, ldb))) return r;
	if ((r = lt.layout_create(ld, out, rows, cols, ldd))) return r;
	if (batch > 1) {
		if ((r = lt_batch(*la, batch, 0))) return r;
		if ((r = lt_batch(*lb, batch, strideB))) return r;
		if ((r = lt_batch(*ld, batch, strideD))) return r;
	}
	if (*n == 0) return 0;
	lt_pref pref = 0;
	if ((r = lt.pref_create(&pref))) return r;
	uint64_t ws = workspace;
	r = lt.pref_set(pref, LT_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
	if (!r) r = lt.heuristic(h, *desc, *la, *lb, *ld, *ld, pref, *n, heur, n);
	lt.pref_destroy(pref);
	return r;
}

// lt_check asks whether algo runs the plan's problem (its workspace need
// in *ws): cublasLtMatmulAlgoCheck, without a heuristic query.
static int lt_check(lt_handle h, lt_desc desc, lt_layout la, lt_layout lb, lt_layout ld, const lt_algo* algo, size_t* ws) {
	lt_heur res;
	int r = lt.check(h, desc, la, lb, ld, ld, algo, &res);
	*ws = res.workspaceSize;
	return r;
}

// Device pointers travel as integers: they are not Go pointers. scaled
// sets the descriptor's scale pointers to scaleA and scaleB (cuBLASLt's A
// and B) first.
static int lt_matmul(lt_handle h, lt_desc desc, uint64_t a, lt_layout la, uint64_t b, lt_layout lb,
                     uint64_t d, lt_layout ld, const lt_algo* algo, uint64_t ws, size_t wsBytes, void* stream,
                     int32_t scaled, uint64_t scaleA, uint64_t scaleB) {
	const float one = 1.0f, zero = 0.0f;
	int r;
	if (scaled && (r = lt_scales(desc, (const void*)scaleA, (const void*)scaleB))) return r;
	return lt.matmul(h, desc, &one, (const void*)a, la, (const void*)b, lb, &zero, (const void*)d, ld,
	                 (void*)d, ld, algo, (void*)ws, wsBytes, stream);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unsafe"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/cuda/libpath"
)

var (
	loadOnce sync.Once
	libName  string
	loadErr  error
)

// Load opens cuBLASLt once and returns the path it loaded.
func Load() (string, error) {
	loadOnce.Do(func() {
		cands := libpath.Candidates("SYMMTUNE_CUBLASLT", "libcublasLt", 11, 14, "libcublasLt.so")
		var bad []string
		for _, name := range cands {
			cs := C.CString(name)
			r := C.lt_open(cs)
			C.free(unsafe.Pointer(cs))
			switch r {
			case 0:
				libName = name
				slog.Debug("cublaslt loaded", "lib", name, "version", int(C.lt_version()))
				return
			case 2:
				bad = append(bad, name+" (symbols missing)")
			}
		}
		loadErr = fmt.Errorf("no usable cuBLASLt library: install the CUDA toolkit's cuBLAS (libcublasLt.so.12 or .13, e.g. /usr/local/cuda/lib64) or set SYMMTUNE_CUBLASLT to its path; tried %d names%s", len(cands), unusable(bad))
	})
	return libName, loadErr
}

func unusable(bad []string) string {
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf(", unusable: %v", bad)
}

// Version is cublasLtGetVersion (e.g. 130100 for 13.1.0), loading the library.
func Version() (int, error) {
	if _, err := Load(); err != nil {
		return 0, err
	}
	return int(C.lt_version()), nil
}

func status(what string, r C.int) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s (%d)", what, C.GoString(C.lt_status(r)), int(r))
}

// DType is an element type (a cudaDataType value).
type DType int

// Element types: bf16 and f16 products read and write their own type; e4m3
// (FP8, CUDA_R_8F_E4M3) inputs write bf16. All accumulate in fp32.
const (
	BF16 DType = C.LT_R_16BF
	F16  DType = C.LT_R_16F
	E4M3 DType = C.LT_R_8F_E4M3
)

// rowScalesVersion is the first cuBLASLt with outer-vector (row) scales.
const rowScalesVersion = 120900

// Handle is a cuBLASLt handle. Create and use it on the thread where the
// rank's CUDA context is current.
type Handle struct{ h C.lt_handle }

// NewHandle loads the library if needed and creates a handle.
func NewHandle() (*Handle, error) {
	if _, err := Load(); err != nil {
		return nil, err
	}
	var h C.lt_handle
	if err := status("cublasLtCreate", C.lt_create(&h)); err != nil {
		return nil, err
	}
	return &Handle{h: h}, nil
}

// Close destroys the handle.
func (h *Handle) Close() error {
	if h == nil || h.h == nil {
		return nil
	}
	err := status("cublasLtDestroy", C.lt_destroy(h.h))
	h.h = nil
	return err
}

// Plan is a Matmul with its descriptors and the heuristic's ranked
// algorithms.
type Plan struct {
	Matmul
	h          C.lt_handle
	desc       C.lt_desc
	la, lb, ld C.lt_layout
	heur       []C.lt_heur
	// onRank, for a plan made by PlanFrom until it ranks its own: called
	// when a launch that cuBLASLt refused makes it rank its own (run).
	onRank func()
}

// MaxAlgos is how many ranked algorithms a plan asks the heuristic for.
const MaxAlgos = 8

// Plan describes m and ranks algorithms for it. It refuses what Matmul's
// fields rule out before it calls cuBLASLt, and row scales when the loaded
// cuBLASLt is older than 12.9.
func (h *Handle) Plan(m Matmul) (*Plan, error) { return h.plan(m, MaxAlgos) }

// PlanFrom describes m with the algorithms ranked for another problem,
// from: one of the same types, layouts, N and K but other rows (a
// bucket's top row count), with no heuristic query of its own (which costs
// a first call at a new row count about 200 µs). Algo index i is from's
// i-th. Where from's algorithm does not run m, cuBLASLt refuses the
// launch before it enqueues anything (cublasLtMatmul checks the algorithm
// and its workspace on every call): the plan then ranks algorithms for m
// itself, calls onRank (nil: none), and launches its own algo-th. So a
// plan made here costs no cublasLtMatmulAlgoCheck (Check).
func (h *Handle) PlanFrom(m Matmul, from *Plan, onRank func()) (*Plan, error) {
	p, err := h.plan(m, 0)
	if err != nil {
		return nil, err
	}
	p.heur = append(p.heur[:0], from.heur...)
	if onRank == nil {
		onRank = func() {}
	}
	p.onRank = onRank
	return p, nil
}

// rankOwn replaces a PlanFrom plan's borrowed ranking with its own.
func (p *Plan) rankOwn() error {
	own, err := (&Handle{h: p.h}).plan(p.Matmul, MaxAlgos)
	if err != nil {
		return err
	}
	p.onRank()
	p.onRank = nil
	if err := p.Close(); err != nil {
		return errors.Join(err, own.Close())
	}
	p.desc, p.la, p.lb, p.ld, p.heur = own.desc, own.la, own.lb, own.ld, own.heur
	return nil
}

// Check says whether the algo-th algorithm runs the plan's problem within
// its workspace (cublasLtMatmulAlgoCheck): nil when it does.
func (p *Plan) Check(algo int) error {
	if algo < 0 || algo >= len(p.heur) {
		return fmt.Errorf("matmul %s: algorithm %d of %d ranked", p.Matmul, algo, len(p.heur))
	}
	var ws C.size_t
	if r := C.lt_check(p.h, p.desc, p.la, p.lb, p.ld, &p.heur[algo].algo, &ws); r != 0 {
		return status("algo check "+p.Matmul.String(), r)
	}
	if int64(ws) > p.Workspace {
		return fmt.Errorf("matmul %s: algorithm %d needs %d bytes of workspace, the plan has %d", p.Matmul, algo, int64(ws), p.Workspace)
	}
	return nil
}

// plan describes m and asks the heuristic for up to want algorithms (0:
// none).
func (h *Handle) plan(m Matmul, want int) (*Plan, error) {
	m, err := m.normalize()
	if err != nil {
		return nil, err
	}
	if h == nil || h.h == nil {
		return nil, fmt.Errorf("matmul %s: the cuBLASLt handle is closed", m)
	}
	if m.Scaling == RowScales {
		v, err := Version()
		if err != nil {
			return nil, fmt.Errorf("matmul %s: %w", m, err)
		}
		if v < rowScalesVersion {
			return nil, fmt.Errorf("matmul %s: row scales need cuBLASLt 12.9 or newer, this is %d", m, v)
		}
	}
	p := &Plan{Matmul: m, h: h.h, heur: make([]C.lt_heur, max(want, 1))}
	n := C.int(want)
	// Row-major D = A·B is column-major Dᵀ = Bᵀ·Aᵀ: cuBLASLt's A is our B
	// (column-major [N,K] with ld LDB, or, stored [N,K] row-major, the
	// transpose of a column-major [K,N]) and its B is our A.
	transA := C.int32_t(0)
	if m.BT {
		transA = 1
	}
	scaled, mode, fast := C.int32_t(0), C.int32_t(C.LT_SCALE_SCALAR_32F), C.int8_t(0)
	if m.Scaling != Unscaled {
		scaled = 1
	}
	if m.Scaling == RowScales {
		mode = C.LT_SCALE_OUTER_VEC_32F
	}
	if m.FastAccum && m.DType == E4M3 {
		fast = 1
	}
	r := C.lt_plan(h.h, C.int(m.DType), C.int(m.Out), C.uint64_t(m.N), C.uint64_t(m.M), C.uint64_t(m.K), transA,
		C.int64_t(m.LDB), C.int64_t(m.LDA), C.int64_t(m.LDD), C.int32_t(m.Batch), C.int64_t(m.StrideA), C.int64_t(m.StrideD),
		C.int32_t(m.SMCountTarget), scaled, mode, fast, C.size_t(m.Workspace),
		&p.desc, &p.la, &p.lb, &p.ld, &p.heur[0], &n)
	if err := status("plan "+m.String()+fp8Hint(m), r); err != nil {
		p.Close()
		return nil, err
	}
	p.heur = p.heur[:n]
	if n == 0 && want > 0 {
		p.Close()
		return nil, fmt.Errorf("matmul %s: cuBLASLt has no algorithm for it%s", m, fp8Hint(m))
	}
	return p, nil
}

// fp8Hint names cuBLASLt's FP8 requirements in an error about m.
func fp8Hint(m Matmul) string {
	if m.DType != E4M3 {
		return ""
	}
	return " (cuBLASLt's FP8 kernels need sm_89 or newer; on sm_89 and sm_90 B stored [N,K] (BT); 16-byte aligned leading dimensions; row scales need sm_90 and cuBLASLt 12.9+)"
}

// Algos is how many algorithms the heuristic ranked (at most MaxAlgos).
func (p *Plan) Algos() int { return len(p.heur) }

// AlgoKey is the algo-th ranked algorithm's 64 opaque bytes in hex, as
// python/symmtune/_cublaslt.py's Plan.algo_keys writes them: equal keys from
// two processes mean the same algorithm.
func (p *Plan) AlgoKey(algo int) string {
	var b strings.Builder
	for _, w := range p.heur[algo].algo.data {
		fmt.Fprintf(&b, "%016x", uint64(w))
	}
	return b.String()
}

// Run enqueues D = A·B on stream with the algo-th ranked algorithm of an
// unscaled (bf16 or f16) plan; a, b and d are device pointers, ws a
// workspace of at least Workspace bytes.
func (p *Plan) Run(stream cu.Stream, algo int, a, b, d, ws cu.DevicePtr) error {
	if p.Scaling != Unscaled {
		return fmt.Errorf("matmul %s: a scaled plan runs with RunScaled", p.Matmul)
	}
	return p.run(stream, algo, a, b, d, ws, 0, 0)
}

// RunScaled enqueues D = dequantized A · dequantized B, like Run, with the
// fp32 scales at device pointers scaleA and scaleB: one float each for
// TensorScales; for RowScales, M floats for A (scaleA points at this
// product's first row's scale) and N for B (one per row of B stored [N,K],
// i.e. per column of D). On an unscaled plan both must be 0 and it is Run.
// It sets the scale pointers on the plan's descriptor before it enqueues,
// so one plan must not run from two goroutines at once.
func (p *Plan) RunScaled(stream cu.Stream, algo int, a, b, d, ws, scaleA, scaleB cu.DevicePtr) error {
	if p.Scaling == Unscaled {
		if scaleA != 0 || scaleB != 0 {
			return fmt.Errorf("matmul %s: scales given to an unscaled plan", p.Matmul)
		}
		return p.run(stream, algo, a, b, d, ws, 0, 0)
	}
	if scaleA == 0 || scaleB == 0 {
		return fmt.Errorf("matmul %s: a scaled plan needs both scale pointers", p.Matmul)
	}
	return p.run(stream, algo, a, b, d, ws, scaleA, scaleB)
}

func (p *Plan) run(stream cu.Stream, algo int, a, b, d, ws, scaleA, scaleB cu.DevicePtr) error {
	if algo < 0 || algo >= len(p.heur) {
		return fmt.Errorf("matmul %s: algorithm %d of %d ranked", p.Matmul, algo, len(p.heur))
	}
	if p.desc == nil {
		return fmt.Errorf("matmul %s: the plan is closed", p.Matmul)
	}
	scaled := C.int32_t(0)
	if p.Scaling != Unscaled {
		scaled = 1
	}
	// Our B is cuBLASLt's A (see Plan), so our A's scale is its B scale.
	launch := func() C.int {
		return C.lt_matmul(p.h, p.desc, C.uint64_t(b), p.la, C.uint64_t(a), p.lb, C.uint64_t(d), p.ld,
			&p.heur[algo].algo, C.uint64_t(ws), C.size_t(p.Workspace), unsafe.Pointer(stream.C()),
			scaled, C.uint64_t(scaleB), C.uint64_t(scaleA))
	}
	r := launch()
	if r != 0 && p.onRank != nil {
		// A borrowed algorithm this problem cannot run (PlanFrom): rank
		// the problem's own and launch its algo-th.
		if err := p.rankOwn(); err != nil {
			return fmt.Errorf("%w (after the borrowed algorithm's launch failed: %w)", err, status("cublasLtMatmul "+p.Matmul.String(), r))
		}
		if algo >= len(p.heur) {
			return fmt.Errorf("matmul %s: algorithm %d of %d ranked for it (the borrowed ranking's did not run it)", p.Matmul, algo, len(p.heur))
		}
		r = launch()
	}
	return status("cublasLtMatmul "+p.Matmul.String(), r)
}

// Close frees the descriptors.
func (p *Plan) Close() error {
	var errs []error
	for _, l := range []*C.lt_layout{&p.la, &p.lb, &p.ld} {
		if *l != nil {
			errs = append(errs, status("layout destroy", C.lt_layout_destroy(*l)))
			*l = nil
		}
	}
	if p.desc != nil {
		errs = append(errs, status("desc destroy", C.lt_desc_destroy(p.desc)))
		p.desc = nil
	}
	return errors.Join(errs...)
}
