//go:build !cuda

// Command gemmalone needs the CUDA build: go build -tags cuda (see main.go).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "gemmalone: built without CUDA; build with: make gemmalone (go build -tags cuda ./bench/gemmalone)")
	os.Exit(2)
}
