package hardware

import (
	"runtime"
	"strings"
	"testing"
)

func TestCPU(t *testing.T) {
	f := CPU()
	if f.Kind != "cpu" {
		t.Errorf("Kind = %q, want cpu", f.Kind)
	}
	if f.Cores != runtime.NumCPU() {
		t.Errorf("Cores = %d, want runtime.NumCPU() = %d", f.Cores, runtime.NumCPU())
	}
	if f.Count != 1 || f.Interconnect != "shm" {
		t.Errorf("Count, Interconnect = %d, %q; want 1, shm", f.Count, f.Interconnect)
	}
	if f.Name == "" {
		t.Error("Name is empty")
	}
	if a, b := f.ID(), CPU().ID(); a != b {
		t.Errorf("ID not deterministic: %q vs %q", a, b)
	}
	if want := "cpu/" + clean(f.Name) + "/"; !strings.HasPrefix(f.ID(), want) {
		t.Errorf("ID %q does not start with %q", f.ID(), want)
	}
}

func TestID(t *testing.T) {
	tests := []struct {
		name string
		f    Fingerprint
		want string
	}{
		{"cpu", Fingerprint{Kind: "cpu", Name: "AMD EPYC 7B13", Count: 1, Cores: 2, Interconnect: "shm"}, "cpu/AMD EPYC 7B13/2c"},
		{"cpu other interconnect", Fingerprint{Kind: "cpu", Name: "AMD EPYC 7B13", Count: 1, Cores: 2, Interconnect: "tcp"}, "cpu/AMD EPYC 7B13/2c/tcp"},
		{"gpu", Fingerprint{Kind: "gpu", Name: "NVIDIA H200", Count: 1, SMs: 132, MemoryMiB: 143771, Compute: "9.0", Driver: "580.95.05", Interconnect: "NVLink x18"},
			"gpu/NVIDIA H200/sm90/132sm/140GiB/drv580.95.05/NVLink x18"},
		{"gpu group", Fingerprint{Kind: "gpu", Name: "NVIDIA H200", Count: 8, SMs: 132, MemoryMiB: 144384, Compute: "9.0", Interconnect: "NVLink x18"},
			"gpu/NVIDIA H200/x8/sm90/132sm/141GiB/NVLink x18"},
		{"odd compute", Fingerprint{Kind: "gpu", Name: "X", Compute: "gfx942"}, "gpu/X/ccgfx942"},
		{"small memory", Fingerprint{Kind: "gpu", Name: "X", MemoryMiB: 256}, "gpu/X/256MiB"},
		{"messy name", Fingerprint{Kind: "cpu", Name: "  Foo\t CPU @ 2.0GHz / v2\n", Cores: 4}, "cpu/Foo CPU @ 2.0GHz _ v2/4c"},
		{"zero", Fingerprint{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.ID(); got != tt.want {
				t.Errorf("ID() = %q, want %q", got, tt.want)
			}
			if got := tt.f.ID(); got != tt.f.ID() {
				t.Errorf("ID() not deterministic")
			}
		})
	}
}

func TestIDDistinct(t *testing.T) {
	base := Fingerprint{Kind: "gpu", Name: "NVIDIA H200", Count: 4, Cores: 0, SMs: 132, MemoryMiB: 143771, Compute: "9.0", Driver: "580.1", Interconnect: "NVLink x18"}
	variants := map[string]Fingerprint{"base": base}
	mod := func(name string, f func(*Fingerprint)) {
		c := base
		f(&c)
		variants[name] = c
	}
	mod("kind", func(f *Fingerprint) { f.Kind = "cpu" })
	mod("name", func(f *Fingerprint) { f.Name = "NVIDIA H100" })
	mod("count", func(f *Fingerprint) { f.Count = 2 })
	mod("count1", func(f *Fingerprint) { f.Count = 1 })
	mod("cores", func(f *Fingerprint) { f.Cores = 16 })
	mod("sms", func(f *Fingerprint) { f.SMs = 114 })
	mod("memory", func(f *Fingerprint) { f.MemoryMiB = 81559 })
	mod("compute", func(f *Fingerprint) { f.Compute = "8.0" })
	mod("driver", func(f *Fingerprint) { f.Driver = "580.2" })
	mod("interconnect", func(f *Fingerprint) { f.Interconnect = "PCIe" })
	mod("no interconnect", func(f *Fingerprint) { f.Interconnect = "" })
	seen := map[string]string{}
	for name, f := range variants {
		id := f.ID()
		if other, dup := seen[id]; dup {
			t.Errorf("variants %s and %s share ID %q", name, other, id)
		}
		seen[id] = name
	}
}

func TestCPUModel(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 64-Core Processor\nmodel name\t: other\n", "AMD EPYC 7B13 64-Core Processor"},
		{"arm", "processor\t: 0\nBogoMIPS\t: 50.00\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4\n", "BCM2835"},
		{"none", "processor\t: 0\n", ""},
		{"empty value", "model name\t:   \nModel\t: Pi\n", "Pi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cpuModel(strings.NewReader(tt.in)); got != tt.want {
				t.Errorf("cpuModel = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	if err := CPU().Validate(); err != nil {
		t.Errorf("CPU().Validate() = %v", err)
	}
	for _, f := range []Fingerprint{{Count: -1}, {Cores: -1}, {SMs: -1}, {MemoryMiB: -1}} {
		if err := f.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want error", f)
		}
	}
}

func TestWithoutDriver(t *testing.T) {
	h200 := Fingerprint{Kind: "gpu", Name: "NVIDIA H200", Count: 4, SMs: 132, MemoryMiB: 143771,
		Compute: "9.0", Driver: "580.95.05", Interconnect: "NVLink x18"}
	upgraded := h200
	upgraded.Driver = "590.10.01"
	if h200.ID() == upgraded.ID() {
		t.Fatal("the driver is not part of the ID")
	}
	if a, b := h200.WithoutDriver().ID(), upgraded.WithoutDriver().ID(); a != b {
		t.Errorf("same hardware under two drivers: %q != %q", a, b)
	}
	if got, want := h200.WithoutDriver().ID(), "gpu/NVIDIA H200/x4/sm90/132sm/140GiB/NVLink x18"; got != want {
		t.Errorf("WithoutDriver().ID() = %q, want %q", got, want)
	}
	if h200.Driver != "580.95.05" {
		t.Error("WithoutDriver changed its receiver")
	}
	for _, mod := range []func(*Fingerprint){
		func(f *Fingerprint) { f.Name = "NVIDIA H100" },
		func(f *Fingerprint) { f.Count = 8 },
		func(f *Fingerprint) { f.SMs = 114 },
		func(f *Fingerprint) { f.MemoryMiB = 97871 },
		func(f *Fingerprint) { f.Compute = "10.0" },
		func(f *Fingerprint) { f.Interconnect = "PCIe" },
	} {
		other := upgraded
		mod(&other)
		if other.WithoutDriver().ID() == h200.WithoutDriver().ID() {
			t.Errorf("%+v and %+v differ in more than the driver, yet compare equal", other, h200)
		}
	}
}
