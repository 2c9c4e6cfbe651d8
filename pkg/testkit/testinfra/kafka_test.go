package testinfra

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
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

// TestKafkaClusterStopStartBroker: a three-broker cluster has three
// addresses and node 2 as its controller; StopBroker closes the broker's
// connections and refuses new ones while the other brokers serve the
// metadata without it; StartBroker brings it back on its address.
func TestKafkaClusterStopStartBroker(t *testing.T) {
	t.Parallel()
	k := StartKafkaCluster(t, 3)
	require.Len(t, k.Addrs, 3)
	require.Equal(t, k.Addr, k.Addrs[0])
	meta := func(addr string) *kafka.MetadataResponse {
		tr := &kafka.Transport{}
		defer tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := (&kafka.Client{Addr: kafka.TCP(addr), Transport: tr}).Metadata(ctx, &kafka.MetadataRequest{})
		require.NoError(t, err)
		return resp
	}
	resp := meta(k.Addrs[1])
	require.Len(t, resp.Brokers, 3)
	require.Equal(t, int(k.Controller()), resp.Controller.ID)

	open, err := net.DialTimeout("tcp", k.Addrs[0], time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = open.Close() })
	k.StopBroker(t, 0)
	require.NoError(t, open.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = open.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "the stopped broker's connection was not closed")
	// Refused as a broker: a dial alone could reach another test's listener
	// that the kernel gave the freed port to.
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = (&kafka.Client{Addr: kafka.TCP(k.Addrs[0]), Transport: tr}).Metadata(ctx, &kafka.MetadataRequest{})
	require.Error(t, err, "the stopped broker still answers")
	require.Len(t, meta(k.Addrs[1]).Brokers, 2)

	k.StartBroker(t, 0)
	require.Len(t, meta(k.Addrs[0]).Brokers, 3)

	addrs := append([]string(nil), k.Addrs...)
	k.Restart(t)
	require.Equal(t, addrs, k.Cluster.ListenAddrs())
	require.Len(t, meta(k.Addrs[2]).Brokers, 3)
}
