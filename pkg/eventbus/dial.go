package eventbus

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// dialTimeout bounds opening a connection to a broker.
const dialTimeout = 5 * time.Second

// readerDialer returns the kafka-go dialer of a consumer's reader: its
// connections close as soon as the context they were dialed under ends.
//
// Why: kafka-go dials each partition reader's connection under that reader's
// context and cancels the context when the group's generation ends (another
// member joined or left) or the reader closes, then waits for every partition
// reader to return. A fetch already held open by the broker does not see the
// cancel: it returns only when the long-poll ends, MaxWait less kafka-go's
// 50 ms round-trip allowance (200 ms by default). Every rebalance therefore
// stalled the whole group for that long — no member consumes while a
// generation changes — and every Close took as long. Closing the connection
// ends the fetch at once; records it would have returned stay uncommitted and
// go to the partition's next owner, as they would after the long-poll.
//
// The dialer's Timeout is zero on purpose: with a Timeout kafka-go hands the
// dial function a child context that ends when the dial returns, not the
// reader's. The dial function bounds the TCP dial itself, and the deadline it
// sets on the fresh connection bounds the TLS handshake; kafka-go replaces
// that deadline with its own on the first request.
func readerDialer(cfg Config) *kafka.Dialer {
	return &kafka.Dialer{
		ClientID:      cfg.memberClientID(),
		TLS:           cfg.TLS,
		SASLMechanism: cfg.SASL,
		DialFunc:      dialUntilDone(cfg.Dial),
	}
}

// dialUntilDone returns a dial function that dials addr within dialTimeout
// (with dial, or over TCP when dial is nil) and returns a connection that
// closes when ctx ends.
func dialUntilDone(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		defer cancel()
		conn, err := dial(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		return closedWhenDone(ctx, conn), nil
	}
}

// closedWhenDone returns conn, closed when ctx ends. A read or write that
// fails because of that close answers an error that wraps ctx's (see
// ctxConn.cut).
func closedWhenDone(ctx context.Context, conn net.Conn) net.Conn {
	_ = conn.SetDeadline(time.Now().Add(dialTimeout))
	c := &ctxConn{Conn: conn, ctx: ctx}
	c.stop = context.AfterFunc(ctx, func() { _ = conn.Close() })
	return c
}

// ctxConn is a connection closed by its dial context's end; closing it first
// drops that registration.
type ctxConn struct {
	net.Conn
	ctx  context.Context
	stop func() bool
	once sync.Once
	err  error
}

// Read is net.Conn's, its error wrapped by cut.
func (c *ctxConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	return n, c.cut(err)
}

// Write is net.Conn's, its error wrapped by cut.
func (c *ctxConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	return n, c.cut(err)
}

// readSlack is how much later than kafka-go asks a consumer connection's
// reads time out. kafka-go gives a fetch a read deadline of MaxWait and asks
// the broker to answer a quarter of it earlier (62 ms of the default 250):
// on a loaded machine — two cores running the whole stack, or a busy broker
// — the answer to an idle partition's long poll came after the deadline, and
// kafka-go logged "the kafka reader got an unknown error … i/o timeout",
// closed the connection and dialed again (dozens of such lines in ten
// minutes of load on `braid dev`). A broker that does not answer at all is
// still given up on, a second later.
const readSlack = time.Second

// SetReadDeadline is net.Conn's, readSlack later (a zero time stays zero).
func (c *ctxConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(slackened(t))
}

// SetDeadline sets the write deadline to t and the read deadline readSlack
// later.
func (c *ctxConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetReadDeadline(slackened(t))
}

func slackened(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Add(readSlack)
}

// cut returns err joined with the dial context's error once that context
// has ended, when the connection failed because its end closed it: kafka-go
// then sees context.Canceled and its partition reader returns quietly ("another
// reader has taken over"), where a bare closed-connection error was logged
// as an unknown error, once per partition, at every rebalance and every stop.
func (c *ctxConn) cut(err error) error {
	if err == nil || c.ctx.Err() == nil {
		return err
	}
	return errors.Join(err, c.ctx.Err())
}

func (c *ctxConn) Close() error {
	c.once.Do(func() {
		c.stop()
		c.err = c.Conn.Close()
	})
	return c.err
}
