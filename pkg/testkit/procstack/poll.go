package procstack

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// Poll calls cond at once and then every interval until it returns true
// (Poll returns nil), an error (Poll returns it) or timeout passes.
func Poll(timeout, interval time.Duration, cond func() (bool, error)) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("condition not met within %s", timeout)
		case <-tick.C:
		}
	}
}

// FreeAddr returns 127.0.0.1:<a port that was free when asked>. Another
// process may take it before the caller binds it.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)), nil
}
