# GPU targets, included by the top Makefile.
#
#   make cuda       fetch CUDA 11.8 headers + libcuda link stub into .cuda/
#                   (once, cached) and build the CUDA plugins into bin/cuda/
#   make cuda-vet   go vet -tags cuda over the cuda-tagged packages
#   make cuda-test  tests that need no GPU: compiles every shipped kernel with
#                   the fetched NVRTC 11.8 (sm_90), from Go and as the Python
#                   runtime assembles them, so CI checks the CUDA C
#   make bench-gpu  the GPU benchmark script (runs on a GPU machine; see bench/gpu.sh)
#
# Why the 11.8 headers: gorgonia.org/cu v0.9.6 does not compile against CUDA
# 13's cuda.h; the binaries built against 11.8 run on newer drivers. NVRTC is
# loaded at run time (cuda/nvrtc), so nothing links against a toolkit version.
CUDA_DIR    ?= .cuda
CUDA_INC     = $(CURDIR)/$(CUDA_DIR)/root/usr/include
CUDA_LIB     = $(CURDIR)/$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu/nvidia/current
CUDA_ENV     = CGO_ENABLED=1 CGO_CFLAGS="-I$(CUDA_INC)" CGO_LDFLAGS="-L$(CUDA_LIB)"
CUDA_PKGS    = ./symm/cudamem/... ./cuda/... ./kernels/gemm/gpu/... ./plugins/allreduce/... ./plugins/agmm/... ./plugins/matmulrs/...
CUDA_PLUGINS = allreduce matmulrs agmm

.PHONY: cuda cuda-headers cuda-vet cuda-test bench-gpu

cuda-headers: $(CUDA_DIR)/ok

$(CUDA_DIR)/ok: scripts/fetch-cuda.sh
	sh scripts/fetch-cuda.sh $(CUDA_DIR)

cuda: cuda-headers
	@mkdir -p $(BIN)/cuda
	@for p in $(CUDA_PLUGINS); do \
	  $(CUDA_ENV) $(GO) build -tags cuda -o $(BIN)/cuda/symmtune-plugin-$$p ./plugins/$$p || exit 1; \
	done

cuda-vet: cuda-headers
	$(CUDA_ENV) $(GO) vet -tags cuda $(CUDA_PKGS)

cuda-test: cuda-headers
	$(CUDA_ENV) SYMMTUNE_NVRTC=$(CURDIR)/$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2 \
	  LD_LIBRARY_PATH=$(CURDIR)/$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu \
	  $(GO) test -tags cuda -count=1 ./cuda/...
	SYMMTUNE_NVRTC=$(CURDIR)/$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2 \
	  LD_LIBRARY_PATH=$(CURDIR)/$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu \
	  PYTHONPATH=$(CURDIR)/python $(PYTHON) -m pytest -q python/tests/test_kernels.py

# Runs on a GPU machine with the binaries already built (make build cuda
# here, then carry them there): see bench/gpu.sh for what it measures.
bench-gpu:
	bash bench/gpu.sh
