package testinfra

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKafkaStopRestartSameAddr checks the broker listens on loopback only,
// refuses connections after Stop and accepts them again on the same address
// after Restart.
func TestKafkaStopRestartSameAddr(t *testing.T) {
	t.Parallel()
	k := StartKafka(t)
	require.True(t, strings.HasPrefix(k.Addr, "127.0.0.1:"), k.Addr)
	dial := func() error {
		c, err := net.DialTimeout("tcp", k.Addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err
	}
	require.NoError(t, dial())
	k.Stop()
	require.Error(t, dial())
	k.Stop() // twice is fine
	addr := k.Addr
	k.Restart(t)
	require.Equal(t, addr, k.Addr)
	require.Equal(t, []string{addr}, k.Cluster.ListenAddrs())
	require.NoError(t, dial())
}
