package tuner

import (
	"os"
	"slices"
	"strings"
)

// EnvPluginEnv names extra environment variables (comma-separated) that
// plugins may see beyond pluginEnvNames and pluginEnvPrefixes. Secrets
// stay out even when named there.
const EnvPluginEnv = "SYMMTUNE_PLUGIN_ENV"

// A plugin process sees only these variables of the host's environment
// (docs/plugins.md lists them): what locates libraries and interpreters,
// configures the GPU libraries a plugin loads, and symmtune's own
// settings. Everything else, credentials above all, stays in the host, as
// Bazel's and Nix's builds see a fixed environment rather than the
// caller's.
var (
	pluginEnvNames = []string{
		"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
		"LD_LIBRARY_PATH", "XDG_CACHE_HOME",
		"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
		"GOMAXPROCS", "GOTRACEBACK", "GODEBUG", "GOCOVERDIR",
	}
	pluginEnvPrefixes = []string{"LC_", "SYMMTUNE_", "CUDA_", "NCCL_", "NVSHMEM_", "TORCH_", "PYTORCH_", "TRITON_", "OMP_"}
)

// isSecretEnv reports whether a variable holds, or may hold, a credential:
// the Redis cache's user and password, the cache location (a Redis URL
// may carry a password), and any name that says it is a secret.
func isSecretEnv(name string) bool {
	if strings.HasPrefix(name, "SYMMTUNE_REDIS_") || name == "SYMMTUNE_CACHE" {
		return true
	}
	up := strings.ToUpper(name)
	for _, w := range []string{"PASSWORD", "PASSWD", "SECRET", "TOKEN", "CREDENTIAL", "PRIVATE_KEY", "API_KEY", "ACCESS_KEY", "AUTH"} {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// pluginEnv is the part of environ (KEY=VALUE entries) a plugin process
// inherits: the allow-list and the names $SYMMTUNE_PLUGIN_ENV adds, never
// a secret. The host appends its own settings for the plugin after these.
func pluginEnv(environ []string) []string {
	var extra []string
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, EnvPluginEnv+"="); ok {
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n != "" {
					extra = append(extra, n)
				}
			}
		}
	}
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || isSecretEnv(name) {
			continue
		}
		allowed := slices.Contains(pluginEnvNames, name) || slices.Contains(extra, name)
		for _, p := range pluginEnvPrefixes {
			allowed = allowed || strings.HasPrefix(name, p)
		}
		if allowed {
			out = append(out, kv)
		}
	}
	return out
}

// hostPluginEnv is pluginEnv of this process's environment.
func hostPluginEnv() []string { return pluginEnv(os.Environ()) }
