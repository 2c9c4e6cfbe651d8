package eventbus

import (
	"context"
	"fmt"
	"sync"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/segmentio/kafka-go"
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
// queues: the channel holds at most FetchBuffer records and PrefetchBytes
// of them (one record more when a single one is larger), kafka-go's queue
// at most min(FetchBuffer, kafkaQueueMax) records.
//
// The records are not committed; pass them to Commit once handled. After a
// rebalance, prefetched records of partitions this member no longer owns may
// still be returned (and are also delivered to the new owner), so handlers
// must be idempotent. A non-nil error other than ErrClosed or ctx's error is
// transient (e.g. the broker is unreachable): the consumer keeps retrying,
// and the caller may call Fetch again.
func (c *Consumer) Fetch(ctx context.Context, limit int) ([]Message, error) {
	return c.fetch(ctx, limit, "group="+c.group)
}

// prefetch is what a Consumer and a Tail share: the records their pumps
// moved out of kafka-go's readers, the oldest fetch error not yet returned,
// and the channel Close closes.
type prefetch struct {
	cfg  Config
	msgs chan Message  // filled by the pumps, cap cfg.FetchBuffer
	errs chan error    // the oldest fetch error not yet returned, cap 1
	stop chan struct{} // closed by Close
	room *room         // bytes of the records in msgs (and on their way in)
}

func newPrefetch(cfg Config) prefetch {
	return prefetch{cfg: cfg, msgs: make(chan Message, cfg.FetchBuffer), errs: make(chan error, 1), stop: make(chan struct{}),
		room: newRoom(cfg.PrefetchBytes)}
}

// room bounds the bytes a prefetch holds: a pump takes a record's size
// before it sends the record, Fetch gives back what its batch took. A
// record is always let in when nothing is held, so one larger than the
// bound still moves.
type room struct {
	max     int64
	mu      sync.Mutex
	held    int64
	freed   chan struct{} // closed (and replaced) when bytes are given back while a pump waits
	waiting bool          // a pump holds freed
}

func newRoom(max int64) *room { return &room{max: max, freed: make(chan struct{})} }

// take waits until n bytes fit (or nothing is held) and counts them; false
// when ctx ended first.
func (r *room) take(ctx context.Context, n int64) bool {
	for {
		r.mu.Lock()
		if r.held == 0 || r.held+n <= r.max {
			r.held += n
			r.mu.Unlock()
			return true
		}
		freed := r.freed
		r.waiting = true
		r.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false
		}
	}
}

// give returns n bytes and wakes every pump waiting for room.
func (r *room) give(n int64) {
	if n == 0 {
		return
	}
	r.mu.Lock()
	r.held -= n
	if r.waiting { // else nobody listens: no channel to replace on every Fetch
		close(r.freed)
		r.freed, r.waiting = make(chan struct{}), false
	}
	r.mu.Unlock()
}

// size is what a record counts against PrefetchBytes: its key, value and
// headers.
func (m Message) size() int64 {
	n := len(m.Key) + len(m.Value)
	for _, h := range m.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}

// closedErr returns ErrClosed once Close has started.
func (p *prefetch) closedErr() error {
	select {
	case <-p.stop:
		return ErrClosed
	default:
		return nil
	}
}

// fetch is Fetch for a reader named name in errors (see Consumer.Fetch).
func (p *prefetch) fetch(ctx context.Context, limit int, name string) ([]Message, error) {
	if limit < 1 {
		return nil, fmt.Errorf("fetch %s: limit %d < 1", name, limit)
	}
	if err := p.closedErr(); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var first Message
	select {
	case first = <-p.msgs:
	case err := <-p.errs:
		return nil, fmt.Errorf("fetch %s: %w", name, err)
	case <-p.stop:
		return nil, fmt.Errorf("fetch %s: %w", name, ErrClosed)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([]Message, 1, min(limit, 1+len(p.msgs)))
	out[0] = first
	bytes := first.size()
	defer func() { p.room.give(bytes) }()
	for len(out) < limit {
		select {
		case m := <-p.msgs:
			out = append(out, m)
			bytes += m.size()
		default:
			p.cfg.observeLag(out)
			return out, nil
		}
	}
	p.cfg.observeLag(out)
	return out, nil
}

// pump moves records from r into p.msgs until ctx ends (Close cancels it
// before closing the reader). Fetch errors are reported through p.errs
// (keeping the oldest unreported one) and retried after
// cfg.JoinGroupBackoff. Every error is retried, io.EOF included: kafka-go
// reports the error of its last failed group join through FetchMessage, and
// a join on a connection the broker closed (a broker restarting) fails with
// io.EOF, which must not be taken for the reader's own end.
func (p *prefetch) pump(ctx context.Context, r *kafka.Reader) {
	for {
		km, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			select {
			case p.errs <- err:
			default:
			}
			if clock.Sleep(ctx, p.cfg.JoinGroupBackoff) != nil {
				return
			}
			continue
		}
		m := p.cfg.fromKafka(km)
		if !p.room.take(ctx, m.size()) {
			return
		}
		select {
		case p.msgs <- m:
		case <-ctx.Done():
			return
		}
	}
}
