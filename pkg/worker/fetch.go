package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// fetchLoop fetches dispatches only while an executor is free, at most as
// many as there are free executors, settles them in order and commits what
// it settled. Fetch errors are transient (the consumer keeps reconnecting)
// and retried with backoff. It returns nil when ctx is done, and an error
// only if the consumer was closed under it.
func (w *Worker) fetchLoop(ctx context.Context, cons eventbus.Fetcher, prod eventbus.Publisher) error {
	failures := 0
	for {
		free := w.acquireSlots(ctx)
		if free == 0 {
			return nil
		}
		msgs, err := cons.Fetch(ctx, free)
		if err != nil {
			w.releaseSlots(free)
			switch {
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, eventbus.ErrClosed):
				return fmt.Errorf("worker %s fetch %s: %w", w.cfg.ID, eventsv1.TopicTaskDispatch, err)
			}
			w.log.Warn("fetch dispatches", logkey.Try, failures+1, logkey.Err, err)
			if clock.Sleep(ctx, backoff(failures)) != nil {
				return nil
			}
			failures++
			continue
		}
		failures = 0
		used := w.settleBatch(ctx, prod, msgs)
		w.releaseSlots(free - used)
	}
}

// acquireSlots blocks until at least one executor is free, then takes every
// free slot. It returns 0 when ctx is done.
func (w *Worker) acquireSlots(ctx context.Context) int {
	select {
	case <-w.slots:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < w.cfg.Concurrency {
		select {
		case <-w.slots:
			n++
		default:
			return n
		}
	}
	return n
}

func (w *Worker) releaseSlots(n int) {
	for range n {
		w.slots <- struct{}{}
	}
}

// settleBatch settles msgs (see settleAll), hands the claimed attempts to
// executors, settles the dispatches that arrived ahead of their records
// (settleAhead) while those run, then queues the settled prefix for commit.
// Messages after the prefix stay uncommitted and are delivered again. It
// returns how many attempts it handed to executors: each holds one of the
// batch's slots.
func (w *Worker) settleBatch(ctx context.Context, prod eventbus.Publisher, msgs []eventbus.Message) (used int) {
	settled, attempts, ahead := w.settleAll(ctx, prod, msgs)
	for _, a := range attempts {
		w.work <- a // never blocks: a holds a slot, and there are as many executors as slots
	}
	if len(ahead) > 0 {
		more, all := w.settleAhead(ctx, prod, msgs, ahead)
		for _, a := range more {
			w.work <- a
		}
		attempts = append(attempts, more...)
		if !all {
			settled = min(settled, ahead[0].at)
		}
	}
	// A failed commit is harmless: the dispatches are delivered again and
	// dropped as duplicates.
	w.commits.Add(msgs[:settled]...)
	return len(attempts)
}
