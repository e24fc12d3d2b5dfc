// Package srchash keeps a kernel's version when its Go source moves out of
// a plugin's package main into a kernel package. The CPU kernels hash their
// own cpu.go (sdk.SourceHash); the move changed only that file's package
// clause, and the kernel is the same, so cache entries tuned before the move
// should stay current. AsMain gives back the bytes the version was made of.
package srchash

import "bytes"

// AsMain returns src, a Go file that starts with its package clause, with
// that clause read as "package main". It panics when src does not start
// with a package clause: the file is embedded at build time, so that is a
// programming error, and the kernels' version tests catch it.
func AsMain(src []byte) []byte {
	rest, ok := bytes.CutPrefix(src, []byte("package "))
	if !ok {
		panic("srchash: the source does not start with its package clause")
	}
	_, rest, ok = bytes.Cut(rest, []byte("\n"))
	if !ok {
		panic("srchash: the source is only a package clause")
	}
	return append([]byte("package main\n"), rest...)
}
