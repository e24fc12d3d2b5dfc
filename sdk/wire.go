package sdk

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/symmtune/symmtune/hardware"
	pb "github.com/symmtune/symmtune/proto/kernelpb"
	"github.com/symmtune/symmtune/space"
)

// Conversions between the protocol's messages and symmtune's Go types, used
// by both sides of the plugin boundary.

// ValueToProto converts a space.Value.
func ValueToProto(v space.Value) *pb.Value {
	if v.IsStr {
		return &pb.Value{Kind: &pb.Value_Str{Str: v.Str}}
	}
	return &pb.Value{Kind: &pb.Value_Int{Int: v.Int}}
}

// ValueFromProto converts a protocol value.
func ValueFromProto(v *pb.Value) (space.Value, error) {
	switch k := v.GetKind().(type) {
	case *pb.Value_Int:
		return space.Int(k.Int), nil
	case *pb.Value_Str:
		return space.Str(k.Str), nil
	}
	return space.Value{}, fmt.Errorf("empty value")
}

// ConfigToProto converts a config.
func ConfigToProto(c space.Config) *pb.Config {
	out := &pb.Config{Values: make(map[string]*pb.Value, len(c))}
	for k, v := range c {
		out.Values[k] = ValueToProto(v)
	}
	return out
}

// ConfigFromProto converts a protocol config.
func ConfigFromProto(c *pb.Config) (space.Config, error) {
	out := make(space.Config, len(c.GetValues()))
	for k, v := range c.GetValues() {
		val, err := ValueFromProto(v)
		if err != nil {
			return nil, fmt.Errorf("config key %q: %w", k, err)
		}
		out[k] = val
	}
	return out, nil
}

// ProblemToProto converts a problem.
func ProblemToProto(p space.Problem) *pb.Problem {
	sh := make(map[string]int64, len(p.Shape))
	for k, v := range p.Shape {
		sh[k] = v
	}
	return &pb.Problem{Shape: sh, Dtype: p.Dtype}
}

// ProblemFromProto converts a protocol problem.
func ProblemFromProto(p *pb.Problem) space.Problem {
	sh := make(space.Shape, len(p.GetShape()))
	for k, v := range p.GetShape() {
		sh[k] = v
	}
	return space.Problem{Shape: sh, Dtype: p.GetDtype()}
}

// DescriptionToProto converts a description.
func DescriptionToProto(d Description) *pb.Description {
	out := &pb.Description{
		Name:          d.Name,
		KernelVersion: d.KernelVersion,
		Dims:          d.Dims,
		Dtypes:        d.Dtypes,
		DefaultConfig: ConfigToProto(d.Default),
		Backends:      d.Backends,
		Summary:       d.Summary,
	}
	for _, p := range d.Space.Params {
		pp := &pb.Param{Name: p.Name}
		for _, v := range p.Values {
			pp.Values = append(pp.Values, ValueToProto(v))
		}
		out.Params = append(out.Params, pp)
	}
	return out
}

// DescriptionFromProto converts a protocol description and checks it is
// self-consistent (the default config lies in the space), that its names
// and values can be written as config text (space.CheckText) and that it
// is small enough for the host to list (space.MaxConfigs).
func DescriptionFromProto(d *pb.Description) (Description, error) {
	out := Description{
		Name:          d.GetName(),
		KernelVersion: d.GetKernelVersion(),
		Dims:          d.GetDims(),
		Dtypes:        d.GetDtypes(),
		Backends:      d.GetBackends(),
		Summary:       d.GetSummary(),
	}
	if err := checkLists(out); err != nil {
		return Description{}, fmt.Errorf("plugin %s: %w", out.Name, err)
	}
	// A name or value listed twice would make the space hold configs twice
	// (counted as valid, measured once) or lose one: refused here, where
	// the host first reads the space.
	names := map[string]bool{}
	for _, p := range d.GetParams() {
		param := space.Param{Name: p.GetName()}
		if param.Name == "" {
			return Description{}, fmt.Errorf("plugin %s: a parameter has no name", out.Name)
		}
		if names[param.Name] {
			return Description{}, fmt.Errorf("plugin %s: parameter %q is listed twice", out.Name, param.Name)
		}
		names[param.Name] = true
		// Values are told apart by their text (config text, --where,
		// the trial log's keys), so 1 and "1" are the same value twice.
		seen := map[string]space.Value{}
		for _, v := range p.GetValues() {
			val, err := ValueFromProto(v)
			if err != nil {
				return Description{}, fmt.Errorf("plugin %s: parameter %q: %w", out.Name, p.GetName(), err)
			}
			if prev, dup := seen[val.String()]; dup {
				if prev == val {
					return Description{}, fmt.Errorf("plugin %s: parameter %q lists the value %s twice", out.Name, p.GetName(), val)
				}
				return Description{}, fmt.Errorf("plugin %s: parameter %q lists %s both as a number and as a string", out.Name, p.GetName(), val)
			}
			seen[val.String()] = val
			param.Values = append(param.Values, val)
		}
		if len(param.Values) == 0 {
			return Description{}, fmt.Errorf("plugin %s: parameter %q has no values", out.Name, p.GetName())
		}
		out.Space.Params = append(out.Space.Params, param)
	}
	if err := out.Space.CheckText(); err != nil {
		return Description{}, fmt.Errorf("plugin %s: %w", out.Name, err)
	}
	if err := out.Space.CheckSize(); err != nil {
		return Description{}, fmt.Errorf("plugin %s: %w", out.Name, err)
	}
	def, err := ConfigFromProto(d.GetDefaultConfig())
	if err != nil {
		return Description{}, fmt.Errorf("plugin %s: default config: %w", out.Name, err)
	}
	if err := out.Space.Check(def); err != nil {
		return Description{}, fmt.Errorf("plugin %s: default config: %w", out.Name, err)
	}
	out.Default = def
	return out, nil
}

// checkLists checks the description's names outside the space: its
// dimensions, dtypes and backends are names that shape text, flags and
// cache keys carry (space.CheckName), each listed once, and its kernel
// version, part of every cache key, holds no control character.
func checkLists(d Description) error {
	for _, l := range []struct {
		what  string
		names []string
	}{{"dimension", d.Dims}, {"dtype", d.Dtypes}, {"backend", d.Backends}} {
		seen := map[string]bool{}
		for _, n := range l.names {
			if err := space.CheckName(l.what, n); err != nil {
				return err
			}
			if seen[n] {
				return fmt.Errorf("%s %q is listed twice", l.what, n)
			}
			seen[n] = true
		}
	}
	if strings.ContainsFunc(d.KernelVersion, unicode.IsControl) {
		return fmt.Errorf("kernel version %q holds a control character", d.KernelVersion)
	}
	return nil
}

// HardwareToProto converts a fingerprint.
func HardwareToProto(f hardware.Fingerprint) *pb.HardwareInfo {
	return &pb.HardwareInfo{
		Kind: f.Kind, Name: f.Name, Count: int32(f.Count), Cores: int32(f.Cores), Sms: int32(f.SMs),
		MemoryMib: f.MemoryMiB, Compute: f.Compute, Driver: f.Driver, Interconnect: f.Interconnect,
	}
}

// HardwareFromProto converts a protocol fingerprint.
func HardwareFromProto(h *pb.HardwareInfo) hardware.Fingerprint {
	return hardware.Fingerprint{
		Kind: h.GetKind(), Name: h.GetName(), Count: int(h.GetCount()), Cores: int(h.GetCores()), SMs: int(h.GetSms()),
		MemoryMiB: h.GetMemoryMib(), Compute: h.GetCompute(), Driver: h.GetDriver(), Interconnect: h.GetInterconnect(),
	}
}
