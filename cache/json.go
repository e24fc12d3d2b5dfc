package cache

// JSON is the entry as `symmtune lookup --json` prints it and libsymmtune's
// cache operations answer it (the Python package builds its Entry from
// this): the key's fields, the config and the measurements, TunedAt as
// RFC 3339. HardwareInfo is added only when withHardware is set.
func (e Entry) JSON(withHardware bool) map[string]any {
	m := map[string]any{
		"kernel": e.Kernel, "kernel_version": e.KernelVersion, "backend": e.Backend, "hardware": e.Hardware,
		"world": e.World, "dtype": e.Dtype, "shape": e.Shape, "config": e.Config.Any(),
		"median_us": e.MedianUS, "min_us": e.MinUS, "p90_us": e.P90US, "default_median_us": e.DefaultMedianUS,
		"trials": e.Trials, "tuned_at": e.TunedAt,
	}
	if withHardware {
		m["hardware_info"] = e.HardwareInfo
	}
	return m
}

// JSON is the match as `symmtune lookup --json` prints it: the entry's
// JSON with "exact" and "other_driver".
func (m Match) JSON(withHardware bool) map[string]any {
	out := m.Entry.JSON(withHardware)
	out["exact"], out["other_driver"] = m.Exact, m.OtherDriver
	return out
}
