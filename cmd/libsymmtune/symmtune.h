/*
 * libsymmtune: symmtune's rules (GEMM plans, config validation, Hopper
 * tiles, defaults, kernel versions, layout constants) and its GEMM launch
 * sequence as a C library, built from cmd/libsymmtune with
 * `go build -tags cuda -buildmode=c-shared` (make lib). It links no CUDA:
 * the driver is loaded at the first kernel call, so the library loads and
 * answers the rules on machines without a GPU (there symmtune_gemm_open
 * fails, naming the missing driver; built without the cuda tag, it says
 * the library has no CUDA).
 *
 * The rules are two functions of plain integers and pointers. Requests and
 * answers are JSON (UTF-8); the operations and their requests are listed by
 * the operation "ops" (request "{}"), and documented in internal/libops.
 * Every call is independent and may be made from any thread.
 */
#ifndef SYMMTUNE_H
#define SYMMTUNE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes; symmtune_abi_version() returns the
 * library's. It changes only when the ABI (these functions, the codes, the
 * buffer protocol) changes, not when operations are added. */
#define SYMMTUNE_ABI_VERSION 5

/* Return codes of symmtune_call. */
#define SYMMTUNE_OK 0           /* out holds the JSON answer */
#define SYMMTUNE_BAD_INPUT 1    /* out holds a one-line message: unknown op, malformed request, a value the rules reject */
#define SYMMTUNE_TOO_SMALL 2    /* nothing written: *out_len is the bytes needed; call again with out_cap >= *out_len */
#define SYMMTUNE_INTERNAL 3     /* out holds a one-line message: a bug of the library (a recovered panic included) */
#define SYMMTUNE_CAPTURE 4      /* (runtime calls, ABI 5) the call would open a runner inside a CUDA graph capture: make it once eagerly first */

int symmtune_abi_version(void);

/* Runs operation op (NUL-terminated) on request_json (NUL-terminated JSON
 * object; NULL or "" means "{}"). The answer (code 0) or the message
 * (codes 1 and 3) is written to out, not NUL-terminated, and its length to
 * *out_len. When it does not fit in out_cap bytes nothing is written, the
 * call returns SYMMTUNE_TOO_SMALL and *out_len is the length needed: the
 * operations are deterministic, so the same call with a buffer that large
 * succeeds (or fails with its message). Calling with out NULL and out_cap 0
 * asks for the length. op NULL is SYMMTUNE_BAD_INPUT with a message; out_len
 * NULL, or out NULL with out_cap > 0, is SYMMTUNE_BAD_INPUT with nothing
 * written. */
int symmtune_call(const char *op, const char *request_json, char *out, size_t out_cap, size_t *out_len);

/*
 * The GEMM runtime: the GPU GEMM plugins' launch sequence (kernels/gemm/gpu's
 * Runner: copies, flags, cuBLASLt products, reductions, the fused Hopper
 * GEMM, graph=1's captured graphs) for a caller whose symmetric memory is
 * its own (symmtune.torch: torch symm_mem). Every call runs on the calling
 * thread in the CUDA context current there, and enqueues work without
 * waiting for it. Codes are those of symmtune_call; msg (may be NULL with
 * msg_cap 0) receives a NUL-terminated one-line message, cut to fit.
 *
 * symmtune_gemm_open (ABI 5: one handle serves every row count up to "m", the
 * largest the region was sized for): request_json is {"kernel": "agmm"|"matmulrs", "m",
 * "n", "k", "world", "rank", "dtype": "bf16"|"f16"|"e4m3"|"e4m3_row"
 * (docs/fp8.md: e4m3 operands with fp32 scales per tensor or per row,
 * bf16 output), "device": the CUDA
 * ordinal whose context is current, "config": {name: value} (a tuned
 * config)}; region_ptrs[0..n_regions) every rank's symmetric region as
 * mapped here (n_regions == world; layout: kernels/gemm/gpu/layout.go, the
 * flag words zeroed on every rank before any rank's first call), ptr_table a
 * device array of 2*world u64 [regions..., signal pads...] (the barrier's).
 * On SYMMTUNE_OK *handle is set, and msg holds a warning when not empty
 * (the config changed to run here). Not while a stream of the context is
 * being captured: it allocates, compiles and synchronizes.
 *
 * symmtune_gemm_enqueue: one call of m rows (1..the handle's m, divisible by
 * the world size) on stream (a CUstream; 0 the legacy default stream). The
 * first call of each m opens that row count's runner (tables and plans;
 * the streams, workspaces and kernels are shared by every handle of the
 * device): not inside a capture (SYMMTUNE_CAPTURE). Where the handle's
 * config does not run at m, m's default runs and msg holds a warning (the
 * first time) with SYMMTUNE_OK. Runners past a bound are closed least
 * recently used; those a captured graph uses live until that graph is
 * destroyed (CUDA user objects). agmm: a the own shard [M/W, K], b B stored [N, K], c C
 * [M, N], extra 0 or where the gathered A [M, K] goes. matmulrs: a A [M, K],
 * b B stored [N, K], c this rank's rows of the sum [M/W, N], extra 0. A
 * fused config whose tile is not K-major takes b stored [K, N]. Operands
 * are dense row-major, 16-byte aligned, on the handle's device. Collective:
 * every rank makes the same calls in the same order. Safe inside a capture
 * of stream (the capture holds the call).
 *
 * symmtune_gemm_enqueue_scaled (ABI 4): symmtune_gemm_enqueue for an
 * "e4m3" or "e4m3_row" handle, whose operands a and b are e4m3 (c bf16)
 * and carry fp32 scales on the device: e4m3, scale_a and scale_b one float
 * each (agmm: the same scale_a on every rank); e4m3_row, scale_a one float
 * per row of a (agmm: this rank's [M/W], gathered with its rows; matmulrs:
 * [M]) and scale_b one per row of B stored [N, K] ([N]). B is read stored
 * [N, K] only. D = scale_a[row] * scale_b[col] * (A B^T), rounded to bf16.
 * symmtune_gemm_enqueue on an FP8 handle, and this call on a bf16 or f16
 * one, are SYMMTUNE_BAD_INPUT with a message naming the call to make.
 *
 * symmtune_gemm_close retires the handle: its runners close now, or once the
 * CUDA graphs that hold them are destroyed (runtime.reap reports when). */
int symmtune_gemm_open(const char *request_json, const uint64_t *region_ptrs, size_t n_regions, uint64_t ptr_table,
                       uint64_t *handle, char *msg, size_t msg_cap);
int symmtune_gemm_enqueue(uint64_t handle, uint64_t stream, int64_t m, uint64_t a, uint64_t b, uint64_t c, uint64_t extra,
                          char *msg, size_t msg_cap);
int symmtune_gemm_enqueue_scaled(uint64_t handle, uint64_t stream, int64_t m, uint64_t a, uint64_t b, uint64_t c,
                                 uint64_t extra, uint64_t scale_a, uint64_t scale_b, char *msg, size_t msg_cap);
int symmtune_gemm_close(uint64_t handle);

/*
 * The all-reduce runtime: kernels/allreduce's Runner (the CUDA plugin's
 * kernel source, compiled with NVRTC for the config; the staged copies,
 * the copy-engine two-shot, the graphs of the calls by tensor address) for
 * symmtune.torch. Calls run as the GEMM runtime's do (calling thread,
 * current context, no waiting); same codes and msg.
 *
 * symmtune_allreduce_open: request_json is {"region_bytes": of each rank's
 * symmetric region, "world", "rank",
 * "dtype": "bf16"|"f16"|"f32", "device": the CUDA ordinal whose context is
 * current, "config": {name: value} (an all-reduce config; two_shot_ce_ag
 * is refused)}; region_ptrs[0..n_regions) every rank's symmetric region as
 * mapped here (n_regions == world), ptr_table a device array of 2*world u64 [regions...,
 * signal pads...]. The push two-shots sum in place over the input region.
 * Not while a stream of the context is being captured.
 *
 * symmtune_allreduce_enqueue: sums the n elements at tensor (16-byte
 * aligned or not; this rank's region itself for no staging copy) over the
 * ranks, in place, on stream. The regions hold [input | scratch | output]
 * of npad elements each (n padded to whole 16-byte vectors on every rank:
 * allreduce.Padded; a size they cannot hold is bad input). Collective: every
 * rank makes the same calls in the same order; safe inside a capture of
 * stream (the capture holds the call; else the call at a (tensor, n) seen
 * before replays a CUDA graph).
 *
 * symmtune_allreduce_close frees the handle's runner after the GPU is done. */
int symmtune_allreduce_open(const char *request_json, const uint64_t *region_ptrs, size_t n_regions, uint64_t ptr_table,
                            uint64_t *handle, char *msg, size_t msg_cap);
int symmtune_allreduce_enqueue(uint64_t handle, uint64_t stream, uint64_t tensor, int64_t n, char *msg, size_t msg_cap);
int symmtune_allreduce_close(uint64_t handle);

#ifdef __cplusplus
}
#endif

#endif /* SYMMTUNE_H */
