# symmtune build. `make demo` builds everything and runs the CPU quickstart;
# `make test` runs the test suite CI runs.
GO       ?= go
BIN      ?= bin
# Every plugins/<name>/ is a plugin: `make build` builds each one with a
# main for the CPU (any main*.go but main_cuda.go), so a new plugin needs no
# list edited here; cuda.mk builds those with a main_cuda.go.
PLUGINS  := $(sort $(patsubst plugins/%/,%,$(dir $(filter-out %/main_cuda.go %_test.go,$(wildcard plugins/*/main*.go)))))
export PATH := $(shell $(GO) env GOPATH)/bin:$(PATH)

# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# report a spurious "context deadline exceeded" failure at the deadline
# (golang/go#75804, fixed in Go 1.27). A count has no deadline to race.
FUZZTIME ?= 50000x

# The Python that runs the Python tests, plugins and linters. Left unset,
# each target that needs one asks scripts/find-python.sh for a python3 (on
# PATH, or /usr/bin/python3) that imports the modules it lists; where none
# does, the script installs Debian's packages when run as root, or says in
# one line what to install. Set, PYTHON is used as is: it must have them.
PYTHON ?=
export PYTHON
FIND_PYTHON := scripts/find-python.sh
PY_TEST_MODULES := grpc google.protobuf numpy pytest cryptography
PY_LINT_MODULES := $(PY_TEST_MODULES) flake8 mypy

.PHONY: all build lib wheel wheel-bin check-guide check-wheel demo test test-python lint-python fuzz search-heldout proto proto-py python-plugins clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/symmtune ./cmd/symmtune
	@for p in $(PLUGINS); do \
	  echo "$(GO) build -o $(BIN)/symmtune-plugin-$$p ./plugins/$$p"; \
	  $(GO) build -o $(BIN)/symmtune-plugin-$$p ./plugins/$$p || exit 1; \
	done

# libsymmtune: the Go rules the Python package binds (cmd/libsymmtune, C ABI
# in cmd/libsymmtune/symmtune.h), beside the package where symmtune._native
# loads it. Needs cgo (gcc); links no CUDA: with -tags cuda it holds the GEMM
# runtime too, whose CUDA driver (cuda/cu) is loaded on first use, so it
# loads and answers the rules on machines without a GPU. Go writes a
# generated header beside it, which the hand-written one replaces.
LIB := python/symmtune/libsymmtune.so
lib:
	CGO_ENABLED=1 $(GO) build -tags cuda -buildmode=c-shared -trimpath -ldflags "-s -w" -o $(LIB) ./cmd/libsymmtune
	@rm -f $(LIB:.so=.h)

# A platform wheel (py3-none-linux_x86_64) of the Python package with the
# library, the Go host and every plugin inside (CPU and CUDA builds, stripped),
# and a `symmtune` console command that runs the host: pip install it where
# there is no Go. scripts/wheel.py writes it with the standard library only,
# into $(BIN)/. The CUDA plugins load the driver on first use (cuda/cu), so
# the wheel's CLI runs CPU searches on machines without a GPU.
WHEEL_BIN := $(BIN)/wheel-bin
WHEEL_GOFLAGS := -ldflags "-s -w"
wheel-bin:
	@rm -rf $(WHEEL_BIN) && mkdir -p $(WHEEL_BIN)/cuda
	$(GO) build $(WHEEL_GOFLAGS) -o $(WHEEL_BIN)/symmtune ./cmd/symmtune
	@for p in $(PLUGINS); do \
	  echo "$(GO) build $(WHEEL_GOFLAGS) -o $(WHEEL_BIN)/symmtune-plugin-$$p ./plugins/$$p"; \
	  $(GO) build $(WHEEL_GOFLAGS) -o $(WHEEL_BIN)/symmtune-plugin-$$p ./plugins/$$p || exit 1; \
	done
	@for p in $(CUDA_PLUGINS); do \
	  echo "$(CUDA_ENV) $(GO) build -tags cuda $(WHEEL_GOFLAGS) -o $(WHEEL_BIN)/cuda/symmtune-plugin-$$p ./plugins/$$p"; \
	  $(CUDA_ENV) $(GO) build -tags cuda $(WHEEL_GOFLAGS) -o $(WHEEL_BIN)/cuda/symmtune-plugin-$$p ./plugins/$$p || exit 1; \
	done

wheel: lib wheel-bin
	@mkdir -p $(BIN)
	$${PYTHON:-python3} scripts/wheel.py --out $(BIN) --bin-dir $(WHEEL_BIN)

# What CI runs beyond the tests: the plugin guide's example searched and
# looked up in Go and Python (docs/plugins.md), and the wheel's symmtune
# command in a bare venv without Go. Each cleans up after itself.
check-guide: build python-plugins
	sh scripts/check-guide.sh

check-wheel: wheel
	sh scripts/check-wheel.sh $$(ls $(BIN)/symmtune-*-py3-none-linux_x86_64.whl)

demo: build
	$(BIN)/symmtune search --config configs/quickstart-cpu.toml

# The Go tests run the host's fault tests and the lookup parity test
# against Python plugins too: here they must not be skipped. One Python,
# found once, runs them, the Python tests and the linters. The library is
# built first: the Go parity test and the Python tests call it
# (SYMMTUNE_LIB names it).
# Tests that skip themselves under -race where it finds nothing (one
# goroutine, deterministic) and makes them five to ten times slower; test
# runs them again without it, in one go test over their packages (which
# then run side by side):
# - the strategy tests that replay every recorded landscape. TestHeldOut
#   and TestSyntheticHeldOut are issue 57's held-out judges
#   (tuner/testdata/split.txt); TestHeldOut reuses TestTenthBudget's tenth;
# - TestContract, in full: under -race it leaves out the surrogate and the
#   bandit on its largest landscape;
# - the GPU GEMM tests that validate every config of whole spaces;
# - the tests that read every committed trial log (report, triallog);
# - the host's walk through a space of a million configs (TestSpaceOfMillions).
REPLAY_TESTS := TestAcceptance|TestAutoChoiceIsBestOnLandscapes|TestTenthBudget|TestHeldOut|TestSyntheticHeldOut|TestContract|TestBudgetMeasuresEveryFamily
ENUMERATION_TESTS := TestBF16SpaceUnchanged|TestParseProblemAndConfig|TestListingUnchanged
LOG_TESTS := TestReportsFromCommittedLogs|TestRecordedLogsLoad
HOST_TESTS := TestSpaceOfMillions
NORACE_TESTS := ^($(REPLAY_TESTS)|$(ENUMERATION_TESTS)|$(LOG_TESTS)|$(HOST_TESTS))$$
NORACE_PKGS := ./tuner/strategy/ ./kernels/gemm/gpu/ ./report/ ./internal/triallog/ ./tuner/
# The race run's slowest packages (the host's fault tests wait out
# timeouts; the strategies' contract), named first so that go test starts
# them first and the rest fill the cores beside them.
RACE_FIRST := ./tuner/ ./tuner/strategy/ ./cmd/symmtune/

# The non-race run is deterministic work for the CPU alone (no test of it
# times anything), so it runs at a low priority (nice 10) beside the race
# run and the Python tests, whose host fault tests mostly wait out
# timeouts: it takes the cycles they leave idle, and the kernel gives them
# the CPU whenever they want it. CI's CUDA lane runs at nice 19, below it:
# the non-race run ends make test, so it goes first. Its output follows
# theirs; a failure of either fails test. GOGC=400: a tenth of its CPU was
# the collector's, over heaps of at most a few hundred MB (its tests keep
# little live), and on CI's two busy cores CPU is its time.
test: lib
	$(GO) vet ./...
	@py=$$($(FIND_PYTHON) $(PY_LINT_MODULES)) || exit 1; echo "Python: $$py"; \
	  norace_log=$$(mktemp); \
	  echo "GOGC=400 nice -n 10 $(GO) test -count=1 -timeout 20m -run '$(NORACE_TESTS)' $(NORACE_PKGS) (skipped under -race; in the background, its output below)"; \
	  GOGC=400 nice -n 10 $(GO) test -count=1 -timeout 20m -run '$(NORACE_TESTS)' $(NORACE_PKGS) >$$norace_log 2>&1 & norace=$$!; \
	  echo "SYMMTUNE_LIB=$(CURDIR)/$(LIB) SYMMTUNE_PYTHON=$$py SYMMTUNE_REQUIRE_PYTHON=1 $(GO) test -race -count=1 $(RACE_FIRST) ./..."; \
	  SYMMTUNE_LIB=$(CURDIR)/$(LIB) SYMMTUNE_PYTHON=$$py SYMMTUNE_REQUIRE_PYTHON=1 $(GO) test -race -count=1 $(RACE_FIRST) ./... && \
	  $(MAKE) --no-print-directory test-python lint-python PYTHON=$$py; rc=$$?; \
	  if [ $$rc -ne 0 ]; then kill $$norace 2>/dev/null; fi; \
	  wait $$norace; norace_rc=$$?; \
	  echo "== the non-race run (nice -n 10 $(GO) test -count=1 -run '$(NORACE_TESTS)' $(NORACE_PKGS)):"; \
	  cat $$norace_log; rm -f $$norace_log; \
	  [ $$rc -eq 0 ] && [ $$norace_rc -eq 0 ]

# The Python package's tests (python/tests), against the CLI and library
# just built. pytest's exit code 5 means it collected no tests: a failure
# here too.
test-python: build lib
	@py=$$($(FIND_PYTHON) $(PY_TEST_MODULES)) || exit 1; \
	  cd python && SYMMTUNE_LIB=$(CURDIR)/$(LIB) SYMMTUNE_BIN=$(CURDIR)/$(BIN)/symmtune $$py -m pytest -q; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests in python/tests" >&2; fi; exit $$rc

# Lints python/: flake8 with pyflakes' checks (F) and syntax errors (E9)
# only, over the .py files and the extension-less plugin scripts but not the
# generated protobuf code; then mypy as python/pyproject.toml configures it.
lint-python:
	@py=$$($(FIND_PYTHON) $(PY_LINT_MODULES)) || exit 1; cd python && \
	  echo "flake8 python/" && $$py -m flake8 --select=F,E9 --filename='*.py,symmtune-plugin-*' \
	    --extend-exclude=symmtune/plugin/_pb . && \
	  echo "mypy python/" && $$py -m mypy

# Issue 57's held-out judge at length, outside CI (10-20 minutes on 2
# shared cores, past go test's default 10-minute timeout: 2026-12-02): the
# recorded held-out and fitting sets, and synthetic landscapes of seeds
# SYNTH_SEEDS (never used for fitting), bars reported rather than held.
# Its output is kept in bench/results/*-heldout-search*.md.
SYNTH_SEEDS ?= 101..110
search-heldout:
	$(GO) test -count=1 -timeout 60m -v -run '^(TestHeldOut|TestSyntheticHeldOut)$$' ./tuner/strategy/ -synth-seeds $(SYNTH_SEEDS) -heldout-wide

# Runs every fuzz target (func FuzzX in a _test.go file) for FUZZTIME
# executions each;
# go test -fuzz takes one target of one package at a time.
fuzz:
	@grep -rl --include='*_test.go' '^func Fuzz' . | while read f; do \
	  d=$$(dirname $$f); \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "fuzz $$d $$t"; \
	    $(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=50x $$d || exit 1; \
	  done; \
	done

# Regenerates the gRPC code from proto/kernel.proto. Needs protoc
# (Debian: protobuf-compiler); the Go generators come from the module proxy.
proto:
	$(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
	$(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
	protoc -I proto --go_out=proto/kernelpb --go_opt=paths=source_relative \
	  --go-grpc_out=proto/kernelpb --go-grpc_opt=paths=source_relative proto/kernel.proto

# Regenerates the Python SDK's code from the same .proto: protoc (Debian:
# protobuf-compiler) writes the messages, Debian's python3-grpc-tools the
# service stubs. The output is committed.
PYPB := python/symmtune/plugin/_pb
proto-py:
	protoc -I proto --python_out=$(PYPB) --pyi_out=$(PYPB) proto/kernel.proto
	py=$$($(FIND_PYTHON) grpc_tools) && $$py -m grpc_tools.protoc -I proto --grpc_python_out=$(PYPB) proto/kernel.proto
	sed -i 's/^import kernel_pb2 as/from . import kernel_pb2 as/' $(PYPB)/kernel_pb2_grpc.py

# Installs the example Python plugins next to the Go ones, their #! line
# naming the Python find-python.sh finds (or PYTHON): the CPU one in $(BIN),
# the Triton one in $(BIN)/cuda.
# They import symmtune: pip install ./python, or PYTHONPATH=python.
PY_PLUGINS := python/examples/allreduce_cpu/symmtune-plugin-pyallreduce python/examples/allgather/symmtune-plugin-pyallgather
PY_PLUGINS_CUDA := python/examples/allreduce_triton/symmtune-plugin-tritonallreduce
python-plugins:
	@mkdir -p $(BIN)/cuda
	@py=$$($(FIND_PYTHON) $(PY_TEST_MODULES)) || exit 1; \
	for s in $(PY_PLUGINS); do sed "1s|.*|#!$$py|" $$s > $(BIN)/$$(basename $$s) && chmod 755 $(BIN)/$$(basename $$s) || exit 1; done; \
	for s in $(PY_PLUGINS_CUDA); do sed "1s|.*|#!$$py|" $$s > $(BIN)/cuda/$$(basename $$s) && chmod 755 $(BIN)/cuda/$$(basename $$s) || exit 1; done

clean:
	rm -rf $(BIN) $(LIB)

# GPU targets (make cuda, make cuda-vet, make bench-gpu) live in cuda.mk.
-include cuda.mk
