package eventbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/produce"
)

// Backoff between the rounds of a Publish that re-sends records: it starts
// at retryBackoffMin and doubles up to retryBackoffMax. The producer's
// metadata is fetched afresh after a failure (refreshMetadata), so the
// pause only spaces the rounds while a leader is being elected.
const (
	retryBackoffMin = 25 * time.Millisecond
	retryBackoffMax = 500 * time.Millisecond
)

// backoff returns the pause before round try+1 (try counts from 0).
func backoff(try int) time.Duration {
	return min(retryBackoffMin<<min(try, 16), retryBackoffMax)
}

// deliver sends parts until every record is acknowledged or nothing more
// can be done. After each round the acknowledged chunks are dropped; a
// partition whose first unacknowledged chunk failed in a way a new leader
// or a reconnection may cure (retriable) is sent again, from that chunk,
// after a backoff and with its leader read from fresh metadata; a
// partition that failed otherwise is given up at once. It returns nil
// only when every chunk was acknowledged, else an error naming each
// partition left (topic, partition, records) with its last error, wrapped
// in ctx's error when ctx ended first.
func (p *Producer) deliver(ctx context.Context, parts []*partition) error {
	var failed []*partition // given up: their first chunk failed for good
	blind := 0              // rounds in a row whose metadata could not be read
	for try := 0; ; try++ {
		p.sendAll(ctx, plan(parts))
		var again []*partition
		for _, part := range unacked(parts) {
			if retriable(part.chunks[0].err) {
				again = append(again, part)
			} else {
				failed = append(failed, part)
			}
		}
		if len(again) == 0 {
			return failure(failed)
		}
		if clock.Sleep(ctx, backoff(try)) != nil {
			return fmt.Errorf("publish: gave up after %d tries: %w: %w", try+1, ctx.Err(), failure(append(failed, again...)))
		}
		if err := p.relead(ctx, again); err != nil {
			if blind++; blind >= metadataTries {
				return fmt.Errorf("publish: no broker answered for metadata %d times in a row: %w: %w", blind, err, failure(append(failed, again...)))
			}
		} else {
			blind = 0
		}
		parts = again
	}
}

// metadataTries is how many rounds in a row a Publish may find no broker
// answering a metadata request before it gives up. kafka-go tries every
// bootstrap broker in turn, so this is the whole cluster out of reach —
// not a leader moving or one broker dying, which the retry is for: the
// caller hears of the outage at once, as before the retry existed, and
// retries on its own terms (the orchestrator's batch loop, the worker's
// outbox, the api's 503).
const metadataTries = 2

// unacked drops from each partition its leading acknowledged chunks and
// returns the partitions that have chunks left. Chunks are sent in order
// and a failure holds back the rest, so what is left starts at the first
// chunk that failed.
func unacked(parts []*partition) []*partition {
	var out []*partition
	for _, part := range parts {
		i := 0
		for i < len(part.chunks) && part.chunks[i].acked {
			i++
		}
		if part.chunks = part.chunks[i:]; len(part.chunks) > 0 {
			out = append(out, part)
		}
	}
	return out
}

// relead sets each partition's leader from the topics' current metadata,
// so the next round groups the records by their new leaders. A topic
// whose metadata cannot be read keeps its old leaders (the next send then
// fails again and says why); the error is the last such failure other
// than an unknown topic, i.e. no broker answered.
func (p *Producer) relead(ctx context.Context, parts []*partition) error {
	layouts := map[string]topicLayout{}
	var blind error
	for _, part := range parts {
		tl, ok := layouts[part.topic]
		if !ok {
			var err error
			if tl, err = p.parts.layout(ctx, part.topic); err != nil {
				if !errors.Is(err, errUnknownTopic) {
					blind = err
				}
				continue
			}
			layouts[part.topic] = tl
		}
		if part.id < len(tl.leaders) {
			part.leader = tl.leaders[part.id]
		}
	}
	return blind
}

// failure returns the error of every chunk of parts, nil when there is none.
func failure(parts []*partition) error {
	var errs []error
	for _, part := range parts {
		for _, c := range part.chunks {
			errs = append(errs, c.failure())
		}
	}
	return errors.Join(errs...)
}

// retriable reports whether a produce that failed with err may succeed if
// sent again, once the producer has fresh metadata: the partition's leader
// moved or is being elected (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE,
// UNKNOWN_TOPIC_OR_PARTITION while a new leader learns of the partition),
// too few replicas are in sync for now (NOT_ENOUGH_REPLICAS, and
// ..._AFTER_APPEND, whose records were written and come twice), the
// request timed out, the broker is not in the metadata the request was
// routed with, the request could not be routed at all (kafka-go's
// produce.Error: no leader, leaders that disagree; nothing was sent), or
// the connection failed (refused, reset, closed, timed out). Other broker
// errors (a record too large, an authorization failure) are final.
func retriable(err error) bool {
	var ke kafka.Error
	if errors.As(err, &ke) {
		return ke.Temporary() || ke == kafka.BrokerNotAvailable || ke == kafka.ReplicaNotAvailable
	}
	var pe *produce.Error
	var ne net.Error
	return errors.As(err, &pe) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, context.DeadlineExceeded)
}
