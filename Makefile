# symmtune build. `make demo` builds everything and runs the CPU quickstart;
# `make test` runs the test suite CI runs.
GO       ?= go
BIN      ?= bin
PLUGINS  := allreduce matmulrs agmm
export PATH := $(shell $(GO) env GOPATH)/bin:$(PATH)

.PHONY: all build demo test proto clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/symmtune ./cmd/symmtune
	@for p in $(PLUGINS); do \
	  if ls plugins/$$p/main*.go >/dev/null 2>&1; then $(GO) build -o $(BIN)/symmtune-plugin-$$p ./plugins/$$p || exit 1; fi; \
	done

demo: build
	$(BIN)/symmtune search --config configs/quickstart-cpu.toml --cache $(BIN)/quickstart-cache.toml

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

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
