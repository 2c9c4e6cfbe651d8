package eventbus

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/syncbuf"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestLateLongPollIsNotAnError: kafka-go gives a fetch a read deadline of
// MaxWait and asks the broker to answer a quarter of it earlier, so on a
// loaded machine the answer to an idle partition's long poll can come after
// the deadline: kafka-go then logged "the kafka reader got an unknown error
// … i/o timeout", closed the connection and dialed again. Here MaxWait is
// 100 ms and every answer of the broker reaches the client 40 ms late (more
// than the 25 ms kafka-go leaves; less than the 50 ms its admin client's
// metadata refresh allows itself, topicPoll): a consumer idles through many
// long polls with no error logged, and still gets a record published
// meanwhile.
func TestLateLongPollIsNotAnError(t *testing.T) {
	t.Parallel()
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	logs := &syncbuf.Buffer{}
	b.cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	b.cfg.Dial = lateAnswers(t, 40*time.Millisecond)
	b.cfg.MaxWait = 100 * time.Millisecond
	c := b.consumer(t, "late", eventsv1.TopicTaskComplete)
	unknown := func() bool { return strings.Contains(logs.String(), "unknown error") }
	require.Never(t, unknown, 2*time.Second, 20*time.Millisecond, "an idle consumer's late long polls are no error")
	p := b.producer(t)
	want := publishResults(t, p, "r1", 1)
	got := fetchN(t, c, 1)
	require.Equal(t, want[0].Value, got[0].Value)
	require.Never(t, unknown, time.Second, 20*time.Millisecond)
	require.NotContains(t, logs.String(), "i/o timeout", logs.String())
}

// lateAnswers dials the broker over TCP and hands back a connection whose
// reads see everything the broker sends delay late.
func lateAnswers(t *testing.T, delay time.Duration) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		broker, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		client, proxy := net.Pipe()
		t.Cleanup(func() { _ = broker.Close(); _ = proxy.Close() })
		go func() { _, _ = io.Copy(broker, proxy); _ = broker.Close() }()
		go func() {
			defer func() { _ = proxy.Close() }()
			buf := make([]byte, 64<<10)
			for {
				n, err := broker.Read(buf)
				if n > 0 {
					<-time.After(delay) // the answer is late, not lost
					if _, werr := proxy.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		return client, nil
	}
}
