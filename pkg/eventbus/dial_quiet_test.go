package eventbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// TestCancelledReaderConnectionSaysCanceled: a reader's connection closed
// because its context ended fails reads and writes with an error that is
// context.Canceled, which kafka-go's partition reader takes as "another
// reader has taken over" and returns from without logging; a connection
// that fails on its own keeps its own error.
func TestCancelledReaderConnectionSaysCanceled(t *testing.T) {
	t.Parallel()
	dial := func(ctx context.Context) (net.Conn, net.Conn) {
		client, server := net.Pipe()
		t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
		conn, err := dialUntilDone(func(context.Context, string, string) (net.Conn, error) { return client, nil })(ctx, "tcp", "broker:9092")
		require.NoError(t, err)
		return conn, server
	}

	ctx, cancel := context.WithCancel(context.Background())
	conn, _ := dial(ctx)
	cancel()
	_, err := conn.Read(make([]byte, 1))
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, io.ErrClosedPipe, "the connection's own error is kept")
	_, err = conn.Write([]byte{1})
	require.ErrorIs(t, err, context.Canceled)

	conn, server := dial(context.Background())
	require.NoError(t, server.Close())
	_, err = conn.Read(make([]byte, 1))
	require.Error(t, err)
	require.NotErrorIs(t, err, context.Canceled, "a broker that hung up is not a cancel")
}

// TestRoutineKafkaErrorsLogAtDebug: kafka-go's error lines go to the
// logger at Warn, except those about REBALANCE_IN_PROGRESS, which every
// member meets when another joins or leaves.
func TestRoutineKafkaErrorsLogAtDebug(t *testing.T) {
	t.Parallel()
	require.True(t, routine([]any{"braid-workers", kafka.RebalanceInProgress}))
	require.True(t, routine([]any{fmt.Errorf("sync group: %w", kafka.RebalanceInProgress)}))
	require.False(t, routine([]any{"braid-workers", kafka.NotCoordinatorForGroup}))
	require.False(t, routine([]any{3, "task.dispatch", int64(7), errors.New("io: read/write on closed pipe")}))
	require.False(t, routine(nil))
}
