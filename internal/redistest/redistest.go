// Package redistest starts real redis-server processes for tests, each on
// a loopback port it picks, with its data in the test's temp directory.
//
// Without redis-server on PATH the tests that need it are skipped with a
// message, unless SYMMTUNE_REQUIRE_REDIS=1 (CI, where .ci/run installs
// Debian's redis-server), which makes that a failure.
package redistest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	args []string
	Port int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	out    *lockedBuffer
}

// lockedBuffer collects the server's output, written by exec's copying
// goroutine while tests read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Need returns redis-server's path, or skips the test (fails it when
// SYMMTUNE_REQUIRE_REDIS=1).
func Need(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("SYMMTUNE_REQUIRE_REDIS") == "1" {
			t.Fatalf("redis-server is not on PATH, and SYMMTUNE_REQUIRE_REDIS=1 (Debian: apt-get install redis-server)")
		}
		t.Skip("redis-server is not on PATH: skipping the Redis tests (Debian: apt-get install redis-server; .ci/run installs it)")
	}
	return bin
}

// Start starts a server with an append-only file synced on every write,
// so that a server killed and restarted (Restart) comes back with every
// write it acknowledged. extra are more redis-server options, e.g.
// "--requirepass", "secret". The server is killed when the test ends.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	s := &Server{t: t, bin: Need(t), dir: t.TempDir()}
	s.args = append([]string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--dir", s.dir, "--protected-mode", "no"}, extra...)
	var err error
	for range 5 { // another process may take the picked port first
		if s.Port, err = freePort(); err != nil {
			t.Fatal(err)
		}
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	return s
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	args := append([]string{"--port", strconv.Itoa(s.Port)}, s.args...)
	if s.tlsPort() {
		args = append([]string{"--port", "0", "--tls-port", strconv.Itoa(s.Port)}, s.args...)
	}
	cmd := exec.Command(s.bin, args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited at start:\n%s", out)
		default:
		}
		if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), time.Second); err == nil {
			c.Close()
			if strings.Contains(out.String(), "Ready to accept connections") {
				s.cmd, s.out, s.exited = cmd, out, exited
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-exited
	return fmt.Errorf("redis-server did not become ready in 15s:\n%s", out)
}

// tlsPort is whether the server was asked for TLS (WithTLS).
func (s *Server) tlsPort() bool {
	for _, a := range s.args {
		if a == "--tls-cert-file" {
			return true
		}
	}
	return false
}

// URL is redis://127.0.0.1:PORT/db (rediss:// for a TLS server).
func (s *Server) URL(db int) string {
	scheme := "redis"
	if s.tlsPort() {
		scheme = "rediss"
	}
	return fmt.Sprintf("%s://127.0.0.1:%d/%d", scheme, s.Port, db)
}

// Client is a plain client of database db, closed when the test ends
// (for servers without TLS).
func (s *Server) Client(db int, user, password string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), DB: db,
		Username: user, Password: password, Protocol: 2, DisableIdentity: true})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// Kill ends the server at once (SIGKILL), as a crash or a lost machine
// would; acknowledged writes are in its append-only file.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.cmd = nil
}

// Restart starts the server again on its port with its data.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// Log is what the server printed.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out == nil {
		return ""
	}
	return s.out.String()
}
