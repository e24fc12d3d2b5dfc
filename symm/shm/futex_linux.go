package shm

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Shared (not private) futex operations: waiters and wakers live in
// different processes that map the same file.
const (
	futexWait = 0
	futexWake = 1
)

// futexWaitFor sleeps while *addr == val, for at most d. Spurious wake-ups
// are fine: callers re-check their condition in a loop.
func futexWaitFor(addr *uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWakeAll wakes every process sleeping on addr.
func futexWakeAll(addr *uint32) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake, uintptr(1<<31-1), 0, 0, 0)
}
