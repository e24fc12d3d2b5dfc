//go:build cuda

package gpu

import "github.com/symmtune/symmtune/space"

// The rules by kernel name, for the cuda build's Kernel, whose Name is
// still the plugin's string: each parses the name and calls the Variant's
// method. An unknown name is the zero Variant, which takes matmulrs's
// branch of the space and the default and fails Validate, as these did
// before Variant. Remove them once Kernel holds a Variant.

// Space is the search space of kernel (Variant.Space).
func Space(kernel string) space.Space { return byName(kernel).Space() }

// Default is the default config of kernel (Variant.Default).
func Default(kernel string) space.Config { return byName(kernel).Default() }

// FitDefault is kernel's default made to run on p (Variant.FitDefault).
func FitDefault(kernel string, p Problem) (space.Config, error) {
	return byName(kernel).FitDefault(p)
}

// ParseConfig reads c as a config of kernel (Variant.ParseConfig).
func ParseConfig(kernel string, c space.Config) (Config, error) {
	return byName(kernel).ParseConfig(c)
}

// Validate rejects configs of kernel that cannot run on p (Variant.Validate).
func Validate(kernel string, c Config, p Problem) error { return byName(kernel).Validate(c, p) }

// SymmetricBytes is the region kernel needs per rank (Variant.SymmetricBytes).
func SymmetricBytes(kernel string, p Problem) int64 { return byName(kernel).SymmetricBytes(p) }

// KernelVersion is kernel's version (Variant.KernelVersion).
func KernelVersion(kernel string) string { return byName(kernel).KernelVersion() }

func byName(kernel string) Variant {
	v, _ := ParseVariant(kernel)
	return v
}
