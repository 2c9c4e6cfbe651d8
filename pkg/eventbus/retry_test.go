package eventbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/produce"
	"github.com/stretchr/testify/require"
)

// TestRetriable: what a new leader or a reconnection may cure is retried;
// a refusal of the records themselves is not.
func TestRetriable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input error
		want  bool
	}{
		{"not leader", kafka.NotLeaderForPartition, true},
		{"leader not available", kafka.LeaderNotAvailable, true},
		{"unknown topic or partition", kafka.UnknownTopicOrPartition, true},
		{"not enough replicas", kafka.NotEnoughReplicas, true},
		{"not enough replicas after append", kafka.NotEnoughReplicasAfterAppend, true},
		{"request timed out", kafka.RequestTimedOut, true},
		{"broker not available", kafka.BrokerNotAvailable, true},
		{"wrapped in a partition's failure", fmt.Errorf("publish 3 records topic=t partition=1: %w", kafka.NotLeaderForPartition), true},
		{"joined with record errors", errors.Join(kafka.NotLeaderForPartition, errors.New("1 records refused")), true},
		{"no route", produce.NewError(errors.New("mismatching leaders (1!=2)")), true},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"connection reset", fmt.Errorf("leader=1: %w", syscall.ECONNRESET), true},
		{"eof", fmt.Errorf("leader=1: %w", io.EOF), true},
		{"unexpected eof", io.ErrUnexpectedEOF, true},
		{"closed connection", net.ErrClosed, true},
		{"request deadline", context.DeadlineExceeded, true},
		{"message too large", kafka.MessageSizeTooLarge, false},
		{"invalid record", kafka.InvalidRecord, false},
		{"authorization", kafka.TopicAuthorizationFailed, false},
		{"sasl", kafka.SASLAuthenticationFailed, false},
		{"cancelled", context.Canceled, false},
		{"no answer", errors.New("no answer for the partition"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, retriable(tt.input), "%v", tt.input)
		})
	}
}

// TestBackoff doubles from the minimum and stops at the maximum.
func TestBackoff(t *testing.T) {
	t.Parallel()
	require.Equal(t, retryBackoffMin, backoff(0))
	require.Equal(t, 2*retryBackoffMin, backoff(1))
	require.Equal(t, retryBackoffMax, backoff(10))
	require.Equal(t, retryBackoffMax, backoff(1000))
	require.LessOrEqual(t, retryBackoffMax, time.Second)
}

// TestUnacked keeps each partition from its first chunk not acknowledged
// on and drops the partitions that were wholly acknowledged.
func TestUnacked(t *testing.T) {
	t.Parallel()
	done := part("a", 0, 1, 10, 10)
	half := part("a", 1, 1, 10, 10, 10)
	none := part("b", 0, 2, 10)
	for _, c := range done.chunks {
		c.setOutcome(nil)
	}
	half.chunks[0].setOutcome(nil)
	half.chunks[1].setOutcome(kafka.NotLeaderForPartition)
	half.chunks[2].setOutcome(errNotSent)
	none.chunks[0].setOutcome(kafka.LeaderNotAvailable)
	tail := half.chunks[1:]

	got := unacked([]*partition{done, half, none})
	require.Equal(t, []*partition{half, none}, got)
	require.Equal(t, tail, half.chunks)
	err := failure(got)
	require.ErrorIs(t, err, kafka.NotLeaderForPartition)
	require.ErrorIs(t, err, errNotSent)
	require.ErrorIs(t, err, kafka.LeaderNotAvailable)
	require.ErrorContains(t, err, "publish 1 records topic=a partition=1")
	require.NotContains(t, err.Error(), "partition=0: "+kafka.NotLeaderForPartition.Error())
	require.NoError(t, failure(nil))
}
