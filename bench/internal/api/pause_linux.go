package api

import (
	"syscall"
	"time"
)

// shortPause blocks the calling thread for d with nanosleep(2), which
// wakes within tens of microseconds; the runtime hands the thread's other
// goroutines to another thread meanwhile.
func shortPause(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for {
		if err := syscall.Nanosleep(&ts, &ts); err != syscall.EINTR {
			return
		}
	}
}
