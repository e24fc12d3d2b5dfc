// Command wgmmagen writes wgmmagen.Header to the file named by its argument.
package main

import (
	"fmt"
	"os"

	"github.com/symmtune/symmtune/kernels/gemm/hopper/internal/wgmmagen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: wgmmagen OUT.cuh")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(wgmmagen.Header()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "wgmmagen:", err)
		os.Exit(1)
	}
}
