# symmtune build. `make demo` builds everything and runs the CPU quickstart;
# `make test` runs the test suite CI runs.
GO       ?= go
BIN      ?= bin
PLUGINS  := allreduce matmulrs agmm
export PATH := $(shell $(GO) env GOPATH)/bin:$(PATH)

# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# report a spurious "context deadline exceeded" failure at the deadline
# (golang/go#75804, fixed in Go 1.27). A count has no deadline to race.
FUZZTIME ?= 50000x

.PHONY: all build demo test fuzz proto clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/symmtune ./cmd/symmtune
	@for p in $(PLUGINS); do \
	  if ls plugins/$$p/main*.go >/dev/null 2>&1; then $(GO) build -o $(BIN)/symmtune-plugin-$$p ./plugins/$$p || exit 1; fi; \
	done

demo: build
	$(BIN)/symmtune search --config configs/quickstart-cpu.toml

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

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

clean:
	rm -rf $(BIN)

# GPU targets (make cuda, make cuda-vet, make bench-gpu) live in cuda.mk.
-include cuda.mk
