package storage

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/internal/redistest"
	"github.com/symmtune/symmtune/space"
)

var t0 = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

func entry(n int64, mods ...func(*cache.Entry)) cache.Entry {
	hw := hardware.Fingerprint{Kind: "cpu", Name: "Test CPU", Count: 1, Cores: 2, Interconnect: "shm"}
	e := cache.Entry{
		Key: cache.Key{Kernel: "allreduce", KernelVersion: "v1", Backend: "cpu", Hardware: hw.ID(),
			World: 2, Dtype: "f32", Shape: space.Shape{"n": n}},
		HardwareInfo: hw,
		Config:       space.Config{"algorithm": space.Str("one_shot"), "threads": space.Int(1)},
		MedianUS:     10, MinUS: 9, P90US: 11, Trials: 5, TunedAt: t0,
	}
	for _, m := range mods {
		m(&e)
	}
	return e
}

func encodeAll(t *testing.T, es []cache.Entry) string {
	t.Helper()
	var b strings.Builder
	for _, e := range es {
		enc, err := cache.EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(enc)
	}
	return b.String()
}

func open(t *testing.T, loc string) cache.Storage {
	t.Helper()
	st, err := Open(loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func load(t *testing.T, st cache.Storage) []cache.Entry {
	t.Helper()
	s, err := st.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.Entries()
}

func TestOpenAndRedact(t *testing.T) {
	t.Setenv(EnvRedisUsername, "")
	t.Setenv(EnvRedisPassword, "")
	tests := []struct {
		loc, location, errPart string
	}{
		{"/tmp/c.toml", "/tmp/c.toml", ""},
		{"relative.toml", "relative.toml", ""},
		{"redis://localhost", "redis://localhost:6379/0", ""},
		{"redis://u:hunter2@db.example:7000/3", "redis://db.example:7000/3", ""},
		{"rediss://:hunter2@db.example/", "rediss://db.example:6379/0", ""},
		{"REDIS://[::1]:7000/2", "redis://[::1]:7000/2", ""},
		{"redis://u:hunter2@db.example:99999/0", "", "port"},
		{"redis://u:hunter2@db.example/x", "", "database number"},
		{"redis://u:hunter2@db.example/0?password=hunter2", "", "no query"},
		{"redis://u:hunt%zzer2@db.example/0", "", "not a valid URL"},
		{"redis://u:hunter2@/0", "", "no host"},
		{"memcached://u:hunter2@db.example", "", "unknown scheme"},
		{"", "", "no cache location"},
	}
	for _, tt := range tests {
		st, err := Open(tt.loc)
		if tt.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("Open(%q) err = %v, want one about %q", tt.loc, err, tt.errPart)
			}
			var le *LocationError
			if !errors.As(err, &le) {
				t.Errorf("Open(%q): %T is not a LocationError", tt.loc, err)
			}
			if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "hunt%zz")) {
				t.Errorf("Open(%q) error shows the password: %v", tt.loc, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%q): %v", tt.loc, err)
			continue
		}
		if got := st.Location(); got != tt.location {
			t.Errorf("Open(%q).Location() = %q, want %q", tt.loc, got, tt.location)
		}
		if got := Redact(tt.loc); got != tt.location {
			t.Errorf("Redact(%q) = %q, want %q", tt.loc, got, tt.location)
		}
		st.Close()
	}
	for _, raw := range []string{"redis://u:p/w@d@host:1/0", "redis://u:hunt%zzer2@h/0", "x://a:hunter2@b"} {
		if got := Redact(raw); strings.Contains(got, "hunter2") || strings.Contains(got, "p/w") || strings.Contains(got, "hunt%") {
			t.Errorf("Redact(%q) = %q shows the password", raw, got)
		}
	}
}

func TestLocalDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if got := LocalDir("redis://a:b@h/0"); got != "/xdg/symmtune" {
		t.Errorf("LocalDir(redis) = %q", got)
	}
	if got := LocalDir("/data/c.toml"); got != "/data" {
		t.Errorf("LocalDir(file) = %q", got)
	}
}

// TestStoresAgree puts the same sequence of entries into a file and into
// Redis and compares what each holds after every step.
func TestStoresAgree(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	file := open(t, filepath.Join(t.TempDir(), "configs.toml"))
	red := open(t, srv.URL(0))
	steps := []struct {
		name string
		es   []cache.Entry
	}{
		{"two slots", []cache.Entry{entry(64), entry(128)}},
		{"faster replaces", []cache.Entry{entry(64, func(e *cache.Entry) { e.MedianUS = 5; e.Config["threads"] = space.Int(2) })}},
		{"slower stays out", []cache.Entry{entry(64, func(e *cache.Entry) { e.MedianUS = 50; e.TunedAt = t0.Add(time.Hour) })}},
		{"newer version replaces", []cache.Entry{entry(128, func(e *cache.Entry) { e.KernelVersion = "v2"; e.MedianUS = 90; e.TunedAt = t0.Add(time.Hour) })}},
		{"same again", []cache.Entry{entry(128, func(e *cache.Entry) { e.KernelVersion = "v2"; e.MedianUS = 90; e.TunedAt = t0.Add(time.Hour) })}},
	}
	for _, st := range steps {
		mf, err := file.Put(ctx, cache.Source{Name: "new", Entries: st.es})
		if err != nil {
			t.Fatal(err)
		}
		mr, err := red.Put(ctx, cache.Source{Name: "new", Entries: st.es})
		if err != nil {
			t.Fatal(err)
		}
		if f, r := encodeAll(t, load(t, file)), encodeAll(t, load(t, red)); f != r {
			t.Fatalf("%s: the file holds\n%s\nRedis holds\n%s", st.name, f, r)
		}
		if len(mf.Conflicts)+len(mf.Superseded)+len(mf.Remeasured) != len(mr.Conflicts)+len(mr.Superseded)+len(mr.Remeasured) {
			t.Errorf("%s: the stores report different drops: %+v vs %+v", st.name, mf, mr)
		}
	}
	got := load(t, red)
	if len(got) != 2 || got[0].KernelVersion != "v2" || got[1].MedianUS != 5 { // n=128 sorts before n=64
		t.Errorf("Redis ended with %v", got)
	}
}

// TestConcurrentWriters has 8 writers, each with its own connection, put
// overlapping random entries at once; Redis must end with what one merge
// of everything gives, and so must a file written the same way.
func TestConcurrentWriters(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	r := mrand.New(mrand.NewPCG(1, 2))
	const writers = 8
	srcs := make([]cache.Source, writers)
	for w := range srcs {
		srcs[w].Name = fmt.Sprintf("writer%d", w)
		seen := map[string]bool{}
		for range 40 {
			v := r.IntN(2)
			e := entry(int64(1)<<r.IntN(6), func(e *cache.Entry) {
				e.World = 2 + 2*r.IntN(2)
				e.KernelVersion = fmt.Sprintf("v%d", v)
				e.TunedAt = t0.Add(time.Duration(10*v+r.IntN(5)) * time.Minute) // versions one after the other
				e.MedianUS = float64(1 + r.IntN(50))
				e.Config = space.Config{"w": space.Int(int64(w)), "c": space.Int(int64(r.IntN(4)))}
			})
			if k := e.Key.String(); !seen[k] {
				seen[k] = true
				srcs[w].Entries = append(srcs[w].Entries, e)
			}
		}
	}
	want, err := cache.Merge(srcs...)
	if err != nil {
		t.Fatal(err)
	}
	filePath := filepath.Join(t.TempDir(), "configs.toml")
	for _, loc := range []string{srv.URL(0), filePath} {
		var wg sync.WaitGroup
		errs := make(chan error, writers*len(srcs[0].Entries))
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := Open(loc)
				if err != nil {
					errs <- err
					return
				}
				defer st.Close()
				for _, e := range srcs[w].Entries { // one Put per entry, like searches
					if _, err := st.Put(ctx, cache.Source{Name: srcs[w].Name, Entries: []cache.Entry{e}}); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := encodeAll(t, load(t, open(t, loc))); got != encodeAll(t, want.Entries) {
			t.Fatalf("%s after concurrent writers:\n%s\nwant (one merge of all):\n%s", Redact(loc), got, encodeAll(t, want.Entries))
		}
	}
}

// One damaged key affects only its slot (issue 55: it stopped every
// lookup and search fleet-wide): Load lists it and reads every other
// slot, and the next winner of that slot replaces it, the damaged value
// kept in a list beside it.
func TestDamagedKeyAffectsOnlyItsSlot(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	st := open(t, srv.URL(0))
	bad, good := entry(64), entry(128)
	if _, err := st.Put(ctx, cache.Source{Name: "x", Entries: []cache.Entry{bad, good}}); err != nil {
		t.Fatal(err)
	}
	c := srv.Client(0, "", "")
	id := bad.Key.Slot().AnyVersion().Ident()
	const broken = "version = 1\n[[entry]]\nkernel = 3\n"
	if err := c.Set(ctx, keyPrefix+id, broken, 0).Err(); err != nil {
		t.Fatal(err)
	}
	s, err := st.Load(ctx)
	if err != nil {
		t.Fatalf("Load with one damaged key: %v", err)
	}
	if es := s.Entries(); len(es) != 1 || !es[0].Key.Equal(good.Key) {
		t.Errorf("entries %v, want only %s", es, good.Key)
	}
	if d := s.Damaged(); len(d) != 1 || !strings.Contains(d[0].Error(), "symmtune:v1:slot:") || string(d[0].Raw) != broken {
		t.Errorf("damage %v, want one naming the key", d)
	}
	better := entry(64, func(e *cache.Entry) { e.MedianUS = 1 })
	m, err := st.Put(ctx, cache.Source{Name: "x", Entries: []cache.Entry{better}})
	if err != nil {
		t.Fatalf("Put over a damaged value: %v", err)
	}
	if len(m.SetAside) != 1 || !strings.Contains(m.SetAsideTo, damagedPrefix) {
		t.Errorf("set aside %v to %q", m.SetAside, m.SetAsideTo)
	}
	if got, _ := c.LRange(ctx, damagedPrefix+id, 0, -1).Result(); len(got) != 1 || got[0] != broken {
		t.Errorf("damaged list %q, want the broken value", got)
	}
	s, err = st.Load(ctx)
	if err != nil || len(s.Damaged()) != 0 || len(s.Entries()) != 2 {
		t.Fatalf("after Put: %v, %d entries, damage %v", err, len(s.Entries()), s.Damaged())
	}
}

// An unresponsive server (it accepts connections and never answers) holds
// a command for the client's 30 s timeout; an interrupt ends the wait at
// once, and Check fails on a server that cannot be reached.
func TestInterruptUnresponsiveServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	st := open(t, "redis://"+ln.Addr().String()+"/0")
	for name, op := range map[string]func(context.Context) error{
		"load": func(ctx context.Context) error { _, err := st.Load(ctx); return err },
		"put": func(ctx context.Context) error {
			_, err := st.Put(ctx, cache.Source{Entries: []cache.Entry{entry(8)}})
			return err
		},
		"check": st.Check,
	} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- op(ctx) }()
		time.Sleep(50 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v, want context.Canceled", name, err)
			}
		case <-time.After(15 * time.Second): // far below the client's 30 s
			t.Fatalf("%s: an interrupt did not end the wait", name)
		}
	}
	closed := open(t, "redis://127.0.0.1:1/0")
	if err := closed.Check(context.Background()); !errors.Is(err, cache.ErrUnavailable) {
		t.Errorf("Check of a closed port: %v, want ErrUnavailable", err)
	}
}

// TestLostServer kills the server: Load and Put fail with an
// UnavailableError (cache.ErrUnavailable), and after a restart every entry
// the server acknowledged is there, whole.
func TestLostServer(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	st := open(t, srv.URL(0))
	var es []cache.Entry
	for i := range 20 {
		es = append(es, entry(int64(1)<<i))
	}
	if _, err := st.Put(ctx, cache.Source{Name: "x", Entries: es}); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	_, err := st.Put(ctx, cache.Source{Name: "x", Entries: []cache.Entry{entry(3)}})
	if !errors.Is(err, cache.ErrUnavailable) || !strings.Contains(err.Error(), srv.URL(0)) {
		t.Errorf("Put to a killed server: %v, want cache.ErrUnavailable naming %s", err, srv.URL(0))
	}
	if _, err := st.Load(ctx); !errors.Is(err, cache.ErrUnavailable) {
		t.Errorf("Load from a killed server: %v, want cache.ErrUnavailable", err)
	}
	srv.Restart()
	want, err := cache.Merge(cache.Source{Name: "x", Entries: es})
	if err != nil {
		t.Fatal(err)
	}
	if got := load(t, st); encodeAll(t, got) != encodeAll(t, want.Entries) {
		t.Errorf("after the restart the server holds %d entries, want the %d it acknowledged", len(got), len(es))
	}
}

func TestAuthAndNoCredentialsShown(t *testing.T) {
	const user, pass, userPass = "tuner-7f3a", "s3cret-9b1c", "u5er-pass-2e8d"
	srv := redistest.Start(t, "--requirepass", pass, "--user", user, "on", ">"+userPass, "~*", "&*", "+@all")
	ctx := context.Background()
	host := fmt.Sprintf("127.0.0.1:%d", srv.Port)
	secrets := []string{user, pass, userPass}
	noSecret := func(what, s string) {
		t.Helper()
		for _, x := range secrets {
			if strings.Contains(s, x) {
				t.Errorf("%s shows a credential: %s", what, s)
			}
		}
	}
	t.Run("url", func(t *testing.T) {
		t.Setenv(EnvRedisUsername, "")
		t.Setenv(EnvRedisPassword, "")
		for _, loc := range []string{"redis://:" + pass + "@" + host + "/1", "redis://" + user + ":" + userPass + "@" + host + "/1"} {
			st := open(t, loc)
			if _, err := st.Put(ctx, cache.Source{Name: "x", Entries: []cache.Entry{entry(64)}}); err != nil {
				t.Fatalf("Put with credentials in the URL: %v", err)
			}
			noSecret("Location", st.Location())
		}
	})
	t.Run("env", func(t *testing.T) {
		t.Setenv(EnvRedisUsername, user)
		t.Setenv(EnvRedisPassword, userPass)
		if got := load(t, open(t, "redis://"+host+"/1")); len(got) != 1 {
			t.Fatalf("Load with credentials from the environment: %d entries", len(got))
		}
	})
	t.Run("wrong", func(t *testing.T) {
		t.Setenv(EnvRedisUsername, "")
		t.Setenv(EnvRedisPassword, "")
		for _, loc := range []string{"redis://" + host + "/1", "redis://" + user + ":wrong-" + pass + "@" + host + "/1"} {
			st := open(t, loc)
			_, err := st.Load(ctx)
			if !errors.Is(err, cache.ErrUnavailable) {
				t.Errorf("Load with a bad password: %v, want cache.ErrUnavailable", err)
			}
			if err != nil {
				noSecret("the error", err.Error())
			}
		}
	})
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	srv := redistest.Start(t, "--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", certFile, "--tls-auth-clients", "no")
	ctx := context.Background()
	if !strings.HasPrefix(srv.URL(0), "rediss://") {
		t.Fatalf("URL %s", srv.URL(0))
	}
	st := open(t, srv.URL(0))
	// The client trusts the system roots: this certificate is not among them.
	if _, err := st.Load(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Load over TLS with an unknown CA: %v, want a certificate error", err)
	}
	st2 := open(t, srv.URL(0))
	st2.(*Redis).client.Options().TLSConfig.RootCAs = pool // as SSL_CERT_FILE would
	if _, err := st2.Put(ctx, cache.Source{Name: "x", Entries: []cache.Entry{entry(64)}}); err != nil {
		t.Fatalf("Put over TLS: %v", err)
	}
	if got := load(t, st2); len(got) != 1 {
		t.Fatalf("Load over TLS: %d entries", len(got))
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "symmtune test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
