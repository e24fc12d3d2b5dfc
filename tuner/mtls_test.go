package tuner

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os/exec"
	"strings"
	"testing"
)

func TestClientConfigIsSecure(t *testing.T) {
	spec := launchSpec{Path: "/nonexistent", Checksum: bytes.Repeat([]byte{1}, 32)}
	cmd := exec.Command(spec.Path)
	cmd.Env = []string{envClientCert + "=inherited from the host's environment"}
	cfg, err := clientConfig(spec, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.AllowedProtocols) != 1 || cfg.AllowedProtocols[0] != "grpc" {
		t.Errorf("allowed protocols %v, want only grpc", cfg.AllowedProtocols)
	}
	// go-plugin's own check hashes the path it then execs (a race), and
	// the path is the child's /proc/self/fd/3: launch checks the pin on
	// the bytes the child runs instead (TestPinnedExecRunsHashedBytes).
	if cfg.SecureConfig != nil {
		t.Errorf("go-plugin's SecureConfig set: %+v", cfg.SecureConfig)
	}
	// mTLS: a per-process P-256 certificate for the host (Python's grpcio
	// refuses P-521, go-plugin's own choice), given to the plugin as the
	// last PLUGIN_CLIENT_CERT, so that it wins over an inherited one.
	tc := cfg.TLSConfig
	if tc == nil || len(tc.Certificates) != 1 || tc.MinVersion < tls.VersionTLS12 || tc.ServerName != "localhost" {
		t.Fatalf("plugin gRPC runs without mutual TLS: %+v", tc)
	}
	cert, err := x509.ParseCertificate(tc.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("host certificate key %T is not ECDSA P-256", cert.PublicKey)
	}
	if err := cert.VerifyHostname("localhost"); err != nil {
		t.Error(err)
	}
	last := cmd.Env[len(cmd.Env)-1]
	block, _ := pem.Decode([]byte(strings.TrimPrefix(last, envClientCert+"=")))
	if !strings.HasPrefix(last, envClientCert+"=") || block == nil || !bytes.Equal(block.Bytes, cert.Raw) {
		t.Errorf("the plugin is not handed the host's certificate last: %q", last)
	}
	if !cfg.SkipHostEnv {
		t.Error("go-plugin would append the host's environment after the certificate")
	}
}
