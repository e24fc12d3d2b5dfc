// Package libops owns the operations libsymmtune (cmd/libsymmtune) serves:
// each takes a JSON request and answers JSON, computed by the Go packages
// that own the rules (kernels/gemm/gpu, kernels/gemm/hopper,
// kernels/allreduce), the trial log (internal/triallog), the tuned-config
// cache (cache, cache/storage) and hardware fingerprints (hardware), so the Python
// runtime and bench's tables ask them instead of keeping copies. It has no cgo and links nothing of CUDA: the C boundary lives in
// cmd/libsymmtune, and this package is tested as plain Go.
package libops

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// BadInputError is an error of the request (malformed JSON, an unknown
// field or operation, a value the rules reject): the caller's to fix.
// Every other error is internal.
type BadInputError struct{ Msg string }

func (e *BadInputError) Error() string { return e.Msg }

// bad makes a BadInputError from a format.
func bad(format string, args ...any) error {
	return &BadInputError{Msg: fmt.Sprintf(format, args...)}
}

// badErr wraps an error of the rules (a Validate or ParseTile message) as
// bad input, its message as is.
func badErr(err error) error {
	if err == nil {
		return nil
	}
	return &BadInputError{Msg: err.Error()}
}

// op decodes its request (a pointer to a struct) and answers.
type op struct {
	doc string
	run func(req []byte) (any, error)
}

// handler adapts a typed operation: the request decodes strictly into Req
// (unknown fields are errors naming the field).
func handler[Req any](doc string, f func(Req) (any, error)) op {
	return op{doc: doc, run: func(b []byte) (any, error) {
		var r Req
		if err := decodeRequest(b, &r); err != nil {
			return nil, err
		}
		return f(r)
	}}
}

var ops map[string]op

func init() {
	ops = map[string]op{}
	for _, m := range []map[string]op{commonOps(), gemmOps(), hopperOps(), allreduceOps(), triallogOps(), cacheOps(), hardwareOps(), runtimeOps(), chooseOps()} {
		for name, o := range m {
			ops[name] = o
		}
	}
}

// Names lists the operations, sorted.
func Names() []string {
	out := make([]string, 0, len(ops))
	for n := range ops {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Call runs operation name on a JSON request and returns the JSON answer.
// Errors are *BadInputError for the caller's mistakes, anything else for
// internal ones; messages are one line.
func Call(name string, req []byte) ([]byte, error) {
	o, ok := ops[name]
	if !ok {
		return nil, bad("unknown operation %q (operations: %s)", name, strings.Join(Names(), ", "))
	}
	v, err := o.run(req)
	if err != nil {
		var b *BadInputError
		if errors.As(err, &b) {
			return nil, &BadInputError{Msg: oneLine(b.Msg)}
		}
		return nil, errors.New(oneLine(err.Error()))
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the answer: %v", name, err)
	}
	return out, nil
}

// oneLine joins a multi-line message (errors.Join's) with "; ".
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

func commonOps() map[string]op {
	return map[string]op{
		"ops": handler("the operations this library serves, with a line on each",
			func(struct{}) (any, error) {
				out := map[string]string{}
				for n, o := range ops {
					out[n] = o.doc
				}
				return out, nil
			}),
		"constants": handler("layout constants and limits of every kernel family (pure data: fetch once)",
			func(struct{}) (any, error) { return constants(), nil }),
	}
}
