package eventbus

import (
	"context"
	"fmt"

	"github.com/braidhq/braid/pkg/clock"
)

// Fetch blocks until at least one record is available (or ctx ends, or the
// consumer is closed), then returns it with every further record already
// prefetched, up to limit records in all, without waiting on any timer.
//
// How: a pump goroutine started by NewConsumer calls kafka-go's FetchMessage
// in a loop and sends each record, in order, into a channel of capacity
// cfg.FetchBuffer. Fetch takes the first record with a blocking receive and
// the rest with non-blocking receives (select with default, which never
// skips a ready record), stopping at limit or when the channel is empty. So the
// batch holds what the pump had received by then; records still inside
// kafka-go's queue come with the next Fetch. Memory stays bounded by the two
// queues (about 2×FetchBuffer records).
//
// The records are not committed; pass them to Commit once handled. After a
// rebalance, prefetched records of partitions this member no longer owns may
// still be returned (and are also delivered to the new owner), so handlers
// must be idempotent. A non-nil error other than ErrClosed or ctx's error is
// transient (e.g. the broker is unreachable): the consumer keeps retrying,
// and the caller may call Fetch again.
func (c *Consumer) Fetch(ctx context.Context, limit int) ([]Message, error) {
	if limit < 1 {
		return nil, fmt.Errorf("fetch group=%s: limit %d < 1", c.group, limit)
	}
	if err := c.closedErr(); err != nil {
		return nil, fmt.Errorf("fetch group=%s: %w", c.group, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var first Message
	select {
	case first = <-c.msgs:
	case err := <-c.errs:
		return nil, fmt.Errorf("fetch group=%s: %w", c.group, err)
	case <-c.stop:
		return nil, fmt.Errorf("fetch group=%s: %w", c.group, ErrClosed)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([]Message, 1, min(limit, 1+len(c.msgs)))
	out[0] = first
	for len(out) < limit {
		select {
		case m := <-c.msgs:
			out = append(out, m)
		default:
			c.cfg.observeLag(out)
			return out, nil
		}
	}
	c.cfg.observeLag(out)
	return out, nil
}

// pump moves records from the kafka-go reader into c.msgs until ctx ends
// (Close cancels it before closing the reader). Fetch errors are reported
// through c.errs (keeping the oldest unreported one) and retried after
// cfg.JoinGroupBackoff. Every error is retried, io.EOF included: kafka-go
// reports the error of its last failed group join through FetchMessage, and
// a join on a connection the broker closed (a broker restarting) fails with
// io.EOF, which must not be taken for the reader's own end.
func (c *Consumer) pump(ctx context.Context) {
	defer close(c.pumpDone)
	for {
		km, err := c.r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			select {
			case c.errs <- err:
			default:
			}
			if clock.Sleep(ctx, c.cfg.JoinGroupBackoff) != nil {
				return
			}
			continue
		}
		select {
		case c.msgs <- c.cfg.fromKafka(km):
		case <-ctx.Done():
			return
		}
	}
}
