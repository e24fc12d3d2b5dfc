package main

// Knobs: faults a test turns on through the plugin's environment, for the
// host's handling of a plugin's own mistakes (a panic where the SDK must
// recover, a malformed space, non-finite numbers) and of its environment.
// Each is off unless its variable is set, so the catalogue of modes above
// keeps its statuses.

import (
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/symmtune/symmtune/space"
)

const (
	// EnvPanicValidate names a mode whose Validate panics.
	EnvPanicValidate = "SYMMTUNE_FAULTY_PANIC_VALIDATE"
	// EnvPanicDescribe makes Describe panic.
	EnvPanicDescribe = "SYMMTUNE_FAULTY_PANIC_DESCRIBE"
	// EnvDuplicate lists a parameter twice ("param") or a value twice ("value").
	EnvDuplicate = "SYMMTUNE_FAULTY_DUPLICATE"
	// EnvRelErr is the relative error (a float: NaN, +Inf...) the slow
	// mode's Verify reports, still saying its result is correct.
	EnvRelErr = "SYMMTUNE_FAULTY_RELERR"
	// EnvBenchTime is the time (a float) the slow mode's Bench reports for
	// every iteration.
	EnvBenchTime = "SYMMTUNE_FAULTY_BENCH_TIME"
	// EnvSymmetricBytes overrides the symmetric bytes every rank asks for.
	EnvSymmetricBytes = "SYMMTUNE_FAULTY_SYMMETRIC_BYTES"
	// EnvListEnv makes Describe's summary the sorted names of the
	// process's environment variables, for tests of what the host passes.
	EnvListEnv = "SYMMTUNE_FAULTY_LIST_ENV"
	// EnvExtraParams adds that many two-valued parameters (x0, x1, ...)
	// to the space: a space too large to enumerate at 40 and more, one
	// whose size overflows an int at 63.
	EnvExtraParams = "SYMMTUNE_FAULTY_EXTRA_PARAMS"
	// EnvSparse, with EnvExtraParams, has Validate accept only configs
	// whose extra parameters are all 0: a space of millions of configs of
	// which few can run, as the CUDA GEMM spaces are (0.3-1.5% valid).
	EnvSparse = "SYMMTUNE_FAULTY_SPARSE"
	// EnvBadText describes what config text cannot hold: a mode value
	// with a comma ("comma"), a parameter named with an '=' ("name"), or
	// a parameter listing 1 as a number and as a string ("numstr").
	EnvBadText = "SYMMTUNE_FAULTY_BAD_TEXT"
)

// describeKnobs applies the Describe knobs to d.
func describeKnobs(ps []space.Param) []space.Param {
	if os.Getenv(EnvPanicDescribe) != "" {
		panic("faulty plugin: simulated panic in Describe\nwith a second line")
	}
	extra, _ := strconv.Atoi(os.Getenv(EnvExtraParams))
	for i := range extra {
		ps = append(ps, space.Param{Name: "x" + strconv.Itoa(i), Values: []space.Value{space.Int(0), space.Int(1)}})
	}
	switch os.Getenv(EnvBadText) {
	case "comma":
		ps[0].Values = append(ps[0].Values, space.Str(Slow+","+Fast))
	case "name":
		ps = append(ps, space.Param{Name: "a=b", Values: []space.Value{space.Int(1)}})
	case "numstr":
		ps = append(ps, space.Param{Name: "numstr", Values: []space.Value{space.Int(1), space.Str("1")}})
	}
	switch os.Getenv(EnvDuplicate) {
	case "param":
		ps = append(ps, space.Param{Name: ps[0].Name, Values: []space.Value{space.Str(Fast)}})
	case "value":
		ps[0].Values = append(ps[0].Values, space.Str(Slow))
	}
	return ps
}

// defaultKnobs adds the Describe knobs' parameters to the default config.
func defaultKnobs(c space.Config) space.Config {
	extra, _ := strconv.Atoi(os.Getenv(EnvExtraParams))
	for i := range extra {
		c["x"+strconv.Itoa(i)] = space.Int(0)
	}
	return c
}

// envSummary is the sorted names of the environment, comma-separated.
func envSummary() (string, bool) {
	if os.Getenv(EnvListEnv) == "" {
		return "", false
	}
	var names []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ","), true
}

// floatKnob reads a float knob; ok is false when it is not set.
func floatKnob(name string) (float64, bool) {
	v, err := strconv.ParseFloat(os.Getenv(name), 64)
	return v, err == nil
}

// sparseReason is why Validate refuses c under EnvSparse: an extra
// parameter at 1 ("" where c can run).
func sparseReason(c space.Config) string {
	if os.Getenv(EnvSparse) == "" {
		return ""
	}
	extra, _ := strconv.Atoi(os.Getenv(EnvExtraParams))
	for i := range extra {
		if name := "x" + strconv.Itoa(i); c[name] != space.Int(0) {
			return name + "=" + c[name].String() + ": the sparse knob runs 0 only"
		}
	}
	return ""
}
