// Package hardware owns the hardware fingerprint that tuned-config cache keys
// carry: a small description of the machine (CPU model and core count, or GPU
// model, count, SMs, memory, compute capability, driver and interconnect)
// and its stable string form, Fingerprint.ID, which the cache stores as the
// "hardware" part of every key. A config tuned on one fingerprint is trusted
// on the same fingerprint and, when a machine has no entry of its own, on the
// same hardware under another driver version (WithoutDriver; cache.Lookup).
package hardware

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Fingerprint describes the hardware a config was tuned on. Zero fields mean
// "unknown / not applicable". The TOML tags let the cache embed the full
// fingerprint as a table next to each entry.
type Fingerprint struct {
	Kind         string `toml:"kind,omitempty" json:"kind,omitempty"`                 // "cpu" or "gpu"
	Name         string `toml:"name,omitempty" json:"name,omitempty"`                 // CPU model name, or GPU name e.g. "NVIDIA H200"
	Count        int    `toml:"count,omitzero" json:"count,omitempty"`                // devices in the group (GPUs used), or 1 for cpu
	Cores        int    `toml:"cores,omitzero" json:"cores,omitempty"`                // logical CPU cores (cpu)
	SMs          int    `toml:"sms,omitzero" json:"sms,omitempty"`                    // streaming multiprocessors (gpu)
	MemoryMiB    int64  `toml:"memory_mib,omitzero" json:"memory_mib,omitempty"`      // per device (gpu)
	Compute      string `toml:"compute,omitempty" json:"compute,omitempty"`           // compute capability "9.0" (gpu)
	Driver       string `toml:"driver,omitempty" json:"driver,omitempty"`             // driver version (gpu)
	Interconnect string `toml:"interconnect,omitempty" json:"interconnect,omitempty"` // e.g. "NVLink x18" / "PCIe" / "shm"
}

// ID is the stable, human-readable cache key for the fingerprint, for example
//
//	cpu/AMD EPYC 7B13/2c
//	gpu/NVIDIA H200/x8/sm90/132sm/141GiB/drv580.95.05/NVLink x18
//
// Segments, in this order: kind, name, "x<count>", "<cores>c",
// "sm<major><minor>" (or "cc<compute>" when the capability is not
// "major.minor"), "<sms>sm", memory, "drv<driver>", interconnect. Fields at
// their zero value are left out, and so are fields at the only value their
// kind allows: a count of 1 and a cpu's "shm" interconnect. Memory is
// rounded to the nearest GiB ("<n>MiB" below 1 GiB), so the driver's
// reserved slack does not split the cache. Text fields are trimmed, runs of
// whitespace collapse to one space, and '/' and control characters become
// '_', so segments never split. Beyond those equivalences, fingerprints
// that differ in any field give different IDs, as long as a text field does
// not itself mimic another segment (a GPU named "x8", say).
func (f Fingerprint) ID() string {
	var segs []string
	add := func(s string) {
		if s = clean(s); s != "" {
			segs = append(segs, s)
		}
	}
	add(f.Kind)
	add(f.Name)
	if f.Count != 0 && f.Count != 1 {
		add("x" + strconv.Itoa(f.Count))
	}
	if f.Cores != 0 {
		add(strconv.Itoa(f.Cores) + "c")
	}
	if c := clean(f.Compute); c != "" {
		add(computeSeg(c))
	}
	if f.SMs != 0 {
		add(strconv.Itoa(f.SMs) + "sm")
	}
	if f.MemoryMiB != 0 {
		add(memorySeg(f.MemoryMiB))
	}
	if d := clean(f.Driver); d != "" {
		add("drv" + d)
	}
	if ic := clean(f.Interconnect); ic != "" && !(clean(f.Kind) == "cpu" && ic == "shm") {
		add(ic)
	}
	return strings.Join(segs, "/")
}

// String is the ID.
func (f Fingerprint) String() string { return f.ID() }

// WithoutDriver is f with the driver version left out. Two fingerprints
// with equal WithoutDriver IDs are the same GPUs (model, count, SMs,
// memory, compute capability) on the same links under possibly different
// drivers, which is when a tuned config carries over (see cache.Lookup).
func (f Fingerprint) WithoutDriver() Fingerprint {
	f.Driver = ""
	return f
}

// computeSeg renders "9.0" as "sm90" and anything else as "cc<text>".
func computeSeg(c string) string {
	major, minor, ok := strings.Cut(c, ".")
	if ok && isDigits(major) && isDigits(minor) {
		return "sm" + major + minor
	}
	return "cc" + c
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func memorySeg(mib int64) string {
	if mib > -512 && mib < 512 {
		return strconv.FormatInt(mib, 10) + "MiB"
	}
	gib := mib / 1024
	if rem := mib % 1024; rem >= 512 {
		gib++
	} else if rem <= -512 {
		gib--
	}
	return strconv.FormatInt(gib, 10) + "GiB"
}

// clean trims s, collapses whitespace runs to one space and replaces '/' and
// control characters with '_'.
func clean(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x85 || r == 0xA0:
			space = true
			continue
		case r == '/' || r < 0x20 || r == 0x7f:
			r = '_'
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CPU fingerprints this machine's CPU: the "model name" from /proc/cpuinfo
// (runtime.GOARCH where that is unavailable), runtime.NumCPU() logical
// cores, Count 1 and Interconnect "shm".
func CPU() Fingerprint {
	name := ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		name = cpuModel(f)
		f.Close()
	}
	if name == "" {
		name = runtime.GOARCH
	}
	return Fingerprint{
		Kind:         "cpu",
		Name:         name,
		Count:        1,
		Cores:        runtime.NumCPU(),
		Interconnect: "shm",
	}
}

// cpuModel returns the first "model name" in /proc/cpuinfo text, falling
// back to the "Model" or "Hardware" lines some ARM kernels print instead.
func cpuModel(r io.Reader) string {
	var fallback string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		val = strings.Join(strings.Fields(val), " ")
		if val == "" {
			continue
		}
		switch key {
		case "model name":
			return val
		case "Model", "Hardware":
			if fallback == "" {
				fallback = val
			}
		}
	}
	return fallback
}

// Validate reports fields no real fingerprint has: negative counts or sizes.
func (f Fingerprint) Validate() error {
	switch {
	case f.Count < 0:
		return fmt.Errorf("hardware count %d is negative", f.Count)
	case f.Cores < 0:
		return fmt.Errorf("hardware cores %d is negative", f.Cores)
	case f.SMs < 0:
		return fmt.Errorf("hardware sms %d is negative", f.SMs)
	case f.MemoryMiB < 0:
		return fmt.Errorf("hardware memory_mib %d is negative", f.MemoryMiB)
	}
	return nil
}
