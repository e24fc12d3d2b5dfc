package tuner

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// How the host runs a plugin binary, and which ones it trusts.
//
// Exec by descriptor. The host opens the binary once and the child execs
// that open file (/proc/self/fd/3, as glibc's fexecve does), so the path
// cannot be swapped between the checks and the exec. A pinned binary is
// first copied into a sealed memfd while it is hashed, and the child execs
// the copy: it runs exactly the bytes that were hashed, even if the file
// is rewritten in place afterwards (go-plugin hashed the path, then
// exec'd the path: a binary swapped in between ran under the good hash).
// The descriptor goes to the child as its fd 3 without close-on-exec, so a
// #! script's interpreter can open /proc/self/fd/3 too.
//
// Permissions, as OpenSSH's StrictModes checks a user's files: the binary
// and every directory above it (and above the plugin directory entry, when
// it is a symlink) must be owned by root or by the user running symmtune,
// and must not be writable by group or others; a directory that is
// writable by others is accepted only with the sticky bit (/tmp), where
// others cannot replace an entry they do not own. Otherwise someone else
// could put their code in the plugin's place. --allow-insecure-plugins
// (AllowInsecurePlugins) turns the check off.

// childExecPath is where the child finds the opened binary: ExtraFiles[0]
// is its file descriptor 3.
const childExecPath = "/proc/self/fd/3"

// openPlugin opens the binary at path for exec: checked for trust unless
// insecure, and for a pin (non-nil) copied into a sealed memfd whose hash
// must match. The caller closes the file once the child has started.
func openPlugin(path string, pin []byte, insecure bool) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open plugin %s: %w", path, err)
	}
	if !insecure {
		if err := checkTrusted(path, f); err != nil {
			f.Close()
			return nil, err
		}
	}
	if pin == nil {
		return f, nil
	}
	mem, err := sealedFor(path, f, pin)
	if !errors.Is(err, errNoMemfd) {
		f.Close()
		return mem, err
	}
	// memfds cannot be made executable here (vm.memfd_noexec = 2): hash
	// the opened file and exec that. A rename after the check still cannot
	// change what runs; a rewrite in place by the file's owner could.
	if err := checkPinned(path, f, pin); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// memfdCreate is unix.MemfdCreate; tests make it fail as a system that
// forbids executable memfds does.
var memfdCreate = unix.MemfdCreate

// errNoMemfd is a sealed copy that cannot be made on this system.
var errNoMemfd = errors.New("no executable memfd")

// checkPinned hashes the opened file f from its start against pin.
func checkPinned(path string, f *os.File, pin []byte) error {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return fmt.Errorf("plugin %s: hash: %w", path, err)
	}
	if !bytes.Equal(h.Sum(nil), pin) {
		return &InputError{fmt.Errorf("plugin %s: %w", path, errPinMismatch)}
	}
	return nil
}

// sealed holds the sealed copies made so far, one per pinned binary as it
// is on disk: the ranks of a group, and the groups restarted after a hang,
// exec one copy (one copy in memory, hashed once) rather than one each.
// A file changed since (another inode, size or ctime, which only root can
// set back) is copied and hashed again.
var sealed = struct {
	sync.Mutex
	m map[sealKey]*os.File
}{m: map[sealKey]*os.File{}}

type sealKey struct {
	dev, ino uint64
	size     int64
	ctime    syscall.Timespec
	pin      string
}

// sealedFor returns a read-only descriptor of the sealed copy of f, made
// now or earlier.
func sealedFor(path string, f *os.File, pin []byte) (*os.File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", path, err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return sealedCopy(path, f, pin)
	}
	key := sealKey{dev: sys.Dev, ino: sys.Ino, size: st.Size(), ctime: sys.Ctim, pin: string(pin)}
	sealed.Lock()
	defer sealed.Unlock()
	mem, ok := sealed.m[key]
	if !ok {
		if mem, err = sealedCopy(path, f, pin); err != nil {
			return nil, err
		}
		sealed.m[key] = mem
	}
	return reopen(path, mem)
}

// reopen opens f anew, read-only, through /proc.
func reopen(path string, f *os.File) (*os.File, error) {
	ro, err := os.Open("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: reopen the pinned copy read-only: %w", path, err)
	}
	return ro, nil
}

// checkTrusted applies the StrictModes rules to the opened file f (its
// own inode, whatever the path names now) and to the directories above
// path, before and after resolving symlinks.
func checkTrusted(path string, f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("plugin %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return &InputError{fmt.Errorf("plugin %s is not a regular file", path)}
	}
	if why := untrusted(st); why != "" {
		return insecureError(path, path, why)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("plugin %s: %w", path, err)
	}
	dirs := map[string]bool{}
	for _, p := range []string{filepath.Dir(abs), abs} {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("plugin %s: %w", path, err)
		}
		if p == abs {
			real = filepath.Dir(real)
		}
		dirs[real] = true
	}
	for dir := range dirs {
		for d := dir; ; d = filepath.Dir(d) {
			dst, err := os.Stat(d)
			if err != nil {
				return fmt.Errorf("plugin %s: %w", path, err)
			}
			if why := untrusted(dst); why != "" {
				return insecureError(path, d, why)
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return nil
}

// untrusted says why a file or directory could be changed by someone other
// than root or this user ("" if it cannot).
func untrusted(st fs.FileInfo) string {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	if uid := sys.Uid; uid != 0 && int(uid) != os.Geteuid() {
		return "it is owned by uid " + strconv.Itoa(int(uid)) + ", neither root nor this user"
	}
	mode := st.Mode()
	switch {
	case mode.IsDir() && mode&fs.ModeSticky != 0:
		return "" // others cannot rename or remove what they do not own
	case mode.Perm()&0o002 != 0:
		return "it is writable by others (" + mode.Perm().String() + ")"
	case mode.Perm()&0o020 != 0:
		return "it is writable by its group (" + mode.Perm().String() + ")"
	}
	return ""
}

func insecureError(plugin, what, why string) error {
	if what == plugin {
		return &InputError{fmt.Errorf("refusing to run plugin %s: %s; fix with chmod go-w (or run with --allow-insecure-plugins)", plugin, why)}
	}
	return &InputError{fmt.Errorf("refusing to run plugin %s: its directory %s: %s; fix with chmod go-w (or run with --allow-insecure-plugins)", plugin, what, why)}
}

// errPinMismatch is a binary whose SHA-256 is not the pinned one.
var errPinMismatch = errors.New("its SHA-256 does not match the pinned checksum; refusing to start it")

// sealedCopy copies f into a memfd while hashing it, checks the hash
// against pin, seals the copy against any change, and returns it opened
// read-only (a process cannot exec a file that is open for writing).
func sealedCopy(path string, f *os.File, pin []byte) (*os.File, error) {
	// Named after the binary, so /proc/PID/exe (and ps) say which plugin
	// the process is: "/memfd:/path/to/symmtune-plugin-x (deleted)".
	name := path
	if abs, err := filepath.Abs(path); err == nil {
		name = abs
	}
	if len(name) > 240 {
		name = name[len(name)-240:]
	}
	fd, err := memfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		// Kernels before 6.3 know no MFD_EXEC; their memfds are executable.
		fd, err = memfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
		return nil, fmt.Errorf("plugin %s: %w: %v", path, errNoMemfd, err)
	}
	if err != nil {
		return nil, fmt.Errorf("plugin %s: memfd for the pinned copy: %w", path, err)
	}
	mem := os.NewFile(uintptr(fd), "memfd:"+name)
	defer mem.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(mem, h), f); err != nil {
		return nil, fmt.Errorf("plugin %s: copy for hashing: %w", path, err)
	}
	if !bytes.Equal(h.Sum(nil), pin) {
		return nil, &InputError{fmt.Errorf("plugin %s: %w", path, errPinMismatch)}
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(mem.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		return nil, fmt.Errorf("plugin %s: seal the pinned copy: %w", path, err)
	}
	return reopen(path, mem)
}
