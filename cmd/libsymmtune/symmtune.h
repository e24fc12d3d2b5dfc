/*
 * libsymmtune: symmtune's GPU-free rules (GEMM plans, config validation,
 * Hopper tiles, defaults, kernel versions, layout constants) as a C library,
 * built from cmd/libsymmtune with `go build -buildmode=c-shared` (make lib).
 * It links no CUDA: it loads and answers on machines without a GPU.
 *
 * The ABI is two functions of plain integers and pointers. Requests and
 * answers are JSON (UTF-8); the operations and their requests are listed by
 * the operation "ops" (request "{}"), and documented in internal/libops.
 * Every call is independent and may be made from any thread.
 */
#ifndef SYMMTUNE_H
#define SYMMTUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes; symmtune_abi_version() returns the
 * library's. It changes only when the ABI (these functions, the codes, the
 * buffer protocol) changes, not when operations are added. */
#define SYMMTUNE_ABI_VERSION 1

/* Return codes of symmtune_call. */
#define SYMMTUNE_OK 0           /* out holds the JSON answer */
#define SYMMTUNE_BAD_INPUT 1    /* out holds a one-line message: unknown op, malformed request, a value the rules reject */
#define SYMMTUNE_TOO_SMALL 2    /* nothing written: *out_len is the bytes needed; call again with out_cap >= *out_len */
#define SYMMTUNE_INTERNAL 3     /* out holds a one-line message: a bug of the library (a recovered panic included) */

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

#ifdef __cplusplus
}
#endif

#endif /* SYMMTUNE_H */
