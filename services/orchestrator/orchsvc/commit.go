package orchsvc

import (
	"context"

	"github.com/braidhq/braid/pkg/eventbus"
)

// commitQueue bounds how many handled batches may wait for their offset
// commit; past it the event loop waits for the committer.
const commitQueue = 64

// commitLoop commits handled batches beside the event loop, in the order
// they were handled, until batches is closed and drained. handleBatch
// queues a batch only once its state is stored and its messages are
// acknowledged, so the rule "commit after the effects" holds; the next
// batch just does not wait for the commit's round trip. Batches queued
// together are committed in one call (a commit moves each partition's
// offset past the highest offset given, so merging consecutive batches
// commits exactly what committing them one by one would).
func (s *Service) commitLoop(ctx context.Context, batches <-chan []eventbus.Message) {
	for msgs := range batches {
		for more := true; more; {
			select {
			case next, ok := <-batches:
				if !ok {
					more = false
					break
				}
				msgs = append(msgs, next...)
			default:
				more = false
			}
		}
		if err := s.cons.Commit(ctx, msgs...); err != nil {
			// A rebalance moved the partition: its new owner gets the records
			// again and the core ignores what was already applied.
			s.log.Warn("commit failed; records will be redelivered", "messages", len(msgs), "err", err)
		}
	}
}
