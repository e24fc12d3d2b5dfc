package tuner

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// envClientCert is where go-plugin's plugin side reads the host's
// certificate (PLUGIN_CLIENT_CERT); a plugin then serves TLS that accepts
// only that certificate and returns its own in the handshake line.
const envClientCert = "PLUGIN_CLIENT_CERT"

// hostTLS is go-plugin's AutoMTLS done by the host itself, with one
// difference: the certificate's key is ECDSA P-256, not P-521. gRPC's
// wrapped languages (Python's grpcio wheels, built on BoringSSL) do not
// accept P-521 certificates, so a Python plugin could not verify a P-521
// host; Go plugins accept either. It returns the TLS configuration for the
// host's side and the certificate (PEM) to hand to the plugin process.
// go-plugin adds the plugin's own certificate as the root to trust when
// the handshake line brings it.
func hostTLS() (*tls.Config, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("host certificate key: %w", err)
	}
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, fmt.Errorf("host certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"symmtune"}},
		DNSNames:              []string{"localhost"},
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageKeyAgreement | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SerialNumber:          sn,
		NotBefore:             now.Add(-30 * time.Second),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("host certificate: %w", err)
	}
	var certPEM bytes.Buffer
	if err := pem.Encode(&certPEM, &pem.Block{Type: "CERTIFICATE", Bytes: der}); err != nil {
		return nil, nil, err
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS12,
		ServerName:   "localhost",
	}
	return cfg, certPEM.Bytes(), nil
}
