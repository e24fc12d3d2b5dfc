# GPU targets, included by the top Makefile.
#
#   make cuda       build the CUDA plugins into bin/cuda/
#   make cuda-vet   go vet -tags cuda over the cuda-tagged packages
#   make cuda-libs  fetch NVRTC 11.8 and 12.4, nvdisasm 12.4 and a CUDA 12
#                   libcuda into .cuda/ (once, cached), for cuda-test
#   make cuda-test  tests that need no GPU: compiles every shipped kernel with
#                   the fetched NVRTC 11.8 (sm_90), from Go and as the Python
#                   runtime assembles them (and the all-reduce's cuda-tagged
#                   tests, Validate's, which need no GPU; the Hopper GEMM's launch
#                   parameters against its signature), and every Hopper GEMM tile with
#                   the fetched NVRTC 12.4 (sm_90a; no register spills, and
#                   the searched tiles' main loops free of per-thread
#                   descriptor moves in their SASS), so CI checks the CUDA C;
#                   and checks that the fetched libcuda
#                   exports every driver entry point cuda/cu binds
#   make sass TILES=REGEXP
#                   the Hopper GEMM's SASS for the tiles matching REGEXP (each
#                   format and epilogue variant TestCompileAllTiles builds)
#                   under .cuda/sass/, and per variant the instructions of
#                   the consumers' main loop
#   make bench-gpu W=2 [PARTS="allreduce gemm ..."]
#                   the maintained GPU benchmarks, every table README.md and
#                   docs/results.md cite (runs on a GPU machine with the
#                   bundle; see bench/all.sh and bench/README.md)
#
# The -tags cuda builds need cgo but no CUDA headers or libraries: the
# driver (cuda/cu), NVRTC, cuBLASLt and NVML are all loaded at run time with
# dlopen, so one binary runs with whichever driver and toolkit a machine has.
CUDA_DIR    ?= .cuda
CUDA_ENV     = CGO_ENABLED=1
CUDA_PKGS    = ./symm/cudamem/... ./cuda/... ./kernels/... ./bench/gemmalone ./plugins/...
# Every plugin with a CUDA main (plugins/<name>/main_cuda.go).
CUDA_PLUGINS = $(sort $(patsubst plugins/%/main_cuda.go,%,$(wildcard plugins/*/main_cuda.go)))
NVRTC12      = $(CURDIR)/$(CUDA_DIR)/nvrtc12/usr/lib/x86_64-linux-gnu

.PHONY: cuda cuda-libs cuda-headers cuda-vet cuda-test bench-gpu gemmalone sass

cuda-libs: $(CUDA_DIR)/ok

# The old name, for scripts that still call it.
cuda-headers: cuda-libs

$(CUDA_DIR)/ok: scripts/fetch-cuda.sh
	sh scripts/fetch-cuda.sh $(CUDA_DIR)

cuda:
	@mkdir -p $(BIN)/cuda
	@for p in $(CUDA_PLUGINS); do \
	  $(CUDA_ENV) $(GO) build -tags cuda -o $(BIN)/cuda/symmtune-plugin-$$p ./plugins/$$p || exit 1; \
	done

# The Hopper GEMM alone against cuBLASLt (bench/gemmalone/main.go says what
# it measures); carry $(BIN)/gemmalone to a GPU machine and run it there.
gemmalone:
	@mkdir -p $(BIN)
	$(CUDA_ENV) $(GO) build -tags cuda -ldflags "-s -w" -o $(BIN)/gemmalone ./bench/gemmalone

# gpu adds the tests that need a GPU (built by scripts/gpu-bundle.sh), so
# they are vetted here though CI cannot run them.
cuda-vet:
	$(CUDA_ENV) $(GO) vet -tags cuda,gpu $(CUDA_PKGS)

# -timeout 30m: CI runs it at nice 19 beside the other tests (.ci/run), where
# the compiles can take longer than go test's default 10 minutes.
cuda-test: cuda-libs
	$(CUDA_ENV) SYMMTUNE_NVRTC=$(CURDIR)/$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2 \
	  LD_LIBRARY_PATH=$(CURDIR)/$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu \
	  SYMMTUNE_LIBCUDA=$$(cat $(CUDA_DIR)/libdir)/libcuda.so.1 SYMMTUNE_REQUIRE_LIBCUDA=1 \
	  $(GO) test -tags cuda -count=1 -timeout 30m ./cuda/...
	$(CUDA_ENV) $(GO) test -tags cuda -count=1 -timeout 30m ./kernels/allreduce/
	$(CUDA_ENV) $(GO) test -tags cuda -count=1 -timeout 30m -run TestLaunchParams ./kernels/gemm/gpu/
	py=$$($(FIND_PYTHON) $(PY_TEST_MODULES)) && \
	  SYMMTUNE_NVRTC=$(CURDIR)/$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2 \
	  LD_LIBRARY_PATH=$(CURDIR)/$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu \
	  PYTHONPATH=$(CURDIR)/python $$py -m pytest -q python/tests/test_kernels.py
	$(CUDA_ENV) SYMMTUNE_NVRTC=$(NVRTC12)/libnvrtc.so.12 LD_LIBRARY_PATH=$(NVRTC12) SYMMTUNE_REQUIRE_SM90A=1 \
	  SYMMTUNE_NVDISASM=$(CURDIR)/$(CUDA_DIR)/nvdisasm/nvdisasm SYMMTUNE_REQUIRE_NVDISASM=1 \
	  $(GO) test -tags cuda -count=1 -timeout 30m -run TestCompileAllTiles ./kernels/gemm/hopper/

# The SASS of the tiles matching TILES, which TestCompileAllTiles writes
# beside each variant's cubin; the test logs each variant's main loop and
# fails where ptxas builds its descriptors per thread (checkMainLoop).
sass: cuda-libs
	@test -n "$(TILES)" || { echo "make sass: set TILES, a regular expression over tile names (e.g. TILES='128x128:s6:c2:g8:pp')" >&2; exit 2; }
	rm -rf $(CUDA_DIR)/sass && mkdir -p $(CUDA_DIR)/sass
	@$(CUDA_ENV) SYMMTUNE_NVRTC=$(NVRTC12)/libnvrtc.so.12 LD_LIBRARY_PATH=$(NVRTC12) SYMMTUNE_REQUIRE_SM90A=1 \
	  SYMMTUNE_NVDISASM=$(CURDIR)/$(CUDA_DIR)/nvdisasm/nvdisasm SYMMTUNE_TILES='$(TILES)' SYMMTUNE_CUBIN_DIR=$(CURDIR)/$(CUDA_DIR)/sass \
	  $(GO) test -tags cuda -count=1 -timeout 30m -v -run 'TestCompileAllTiles$$' ./kernels/gemm/hopper/ >$(CUDA_DIR)/sass/test.log 2>&1; \
	  rc=$$?; grep -E 'main loop|compile_test|FAIL' $(CUDA_DIR)/sass/test.log; exit $$rc
	@echo "SASS in $(CUDA_DIR)/sass/"

# Runs on a GPU machine with the bundle built here (sh scripts/gpu-bundle.sh,
# then carry .gpu there; no Go needed there): the maintained benchmarks of
# bench/README.md on W GPUs, all of them or the PARTS named, each writing
# its results under $(BENCH_OUT).
W         ?= 2
PARTS     ?=
BENCH_OUT ?= $(if $(OUT),$(OUT),bench/out)
bench-gpu:
	OUT=$(BENCH_OUT) bash bench/all.sh $(W) $(PARTS)
