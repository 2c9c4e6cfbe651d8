package devbroker

import (
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// failingOnce is a listener whose first Accept fails as with too many open
// files.
type failingOnce struct {
	net.Listener
	failed atomic.Bool
}

func (f *failingOnce) Accept() (net.Conn, error) {
	if !f.failed.Swap(true) {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return f.Listener.Accept()
}

// TestLocalOutlivesAFailedAccept: a failed TCP accept is not passed on
// (kfake would stop listening for good); the next connection is accepted,
// and the listener's close is passed on.
func TestLocalOutlivesAFailedAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := newLocal(&failingOnce{Listener: ln})
	accepted := make(chan error, 2)
	go func() {
		for {
			c, err := l.Accept()
			accepted <- err
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	select {
	case err := <-accepted:
		require.NoError(t, err, "the failed accept was passed on")
	case <-time.After(10 * time.Second):
		t.Fatal("the connection after a failed accept was never accepted")
	}
	require.NoError(t, l.Close())
	select {
	case err := <-accepted:
		require.True(t, errors.Is(err, net.ErrClosed), "close not passed on: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Accept did not return after Close")
	}
}
