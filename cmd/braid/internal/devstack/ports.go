package devstack

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// checkFree fails with a message naming flag when nothing may listen on
// addr: most often because the port is taken (another braid dev, or a
// system Redis on the same port). Another process may still take the port
// between this check and the real bind; the real bind's error then names
// the flag too (see listenError).
//
// A port in use is retried for up to portReleaseWait: after a braid dev is
// killed with SIGKILL its redis-server child gets SIGTERM (Pdeathsig) and
// needs a moment to write its AOF and close its port, so a start right
// after the kill would otherwise fail.
func checkFree(flag, addr string) error {
	deadline := time.Now().Add(portReleaseWait)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln.Close()
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return listenError(flag, addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// portReleaseWait bounds how long checkFree waits for a port in use.
const portReleaseWait = 5 * time.Second

// listenError explains a failure to listen on addr and names the flag that
// changes it.
func listenError(flag, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s: address %s is already in use (is another braid dev running?); pick a free one with %s host:port", flag, addr, flag)
	}
	return fmt.Errorf("%s: cannot listen on %s: %w; pick another with %s host:port", flag, addr, err, flag)
}
