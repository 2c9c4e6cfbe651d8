package eventbus

import "context"

// The interfaces below are the event bus's written contract: what the
// services may rely on, whatever carries the records. Producer and Consumer
// implement them; package eventbustest states the same rules in code
// (RunConformance), and every implementation — this package on kfake and
// on Kafka, or a fake in a test — must pass it. Each consumer of the bus
// takes the smallest of them that covers what it calls.

// Publisher writes records to the bus.
//
// Ack: Publish returns nil only once the broker has acknowledged every
// record (for Kafka: all in-sync replicas). It never buffers records past
// its return, so a caller that got nil may commit the input those records
// follow from. On error some records may have been written, and a retry
// can duplicate them: consumers dedupe.
//
// Order: records with the same key are delivered in the order given, within
// one call and across calls made one after another.
//
// DeadLetter writes m to the dead-letter topic of m.Topic (eventsv1.DLQ)
// with m's key, value and headers plus the reason and m's coordinates
// (eventsv1.HeaderDLQReason, HeaderDLQTopic, HeaderDLQPartition,
// HeaderDLQOffset). It acknowledges like Publish: commit m only after it
// returned nil.
//
// Concurrency: safe for concurrent use.
type Publisher interface {
	Publish(ctx context.Context, msgs ...Message) error
	DeadLetter(ctx context.Context, m Message, reason string) error
}

// Fetcher reads records as a member of a consumer group.
//
// Fetch blocks until at least one record is there (or ctx ends, or the
// fetcher is closed: ErrClosed), then returns up to limit records in
// partition order. Fetching commits nothing: a record is delivered again,
// after a restart or a rebalance, unless it was committed
// (OffsetCommitter). Any other error is transient: call Fetch again.
//
// Concurrency: call Fetch from one goroutine at a time.
type Fetcher interface {
	Fetch(ctx context.Context, limit int) ([]Message, error)
}

// OffsetCommitter commits records returned by a Fetcher.
//
// Commit moves the group's offset of each partition past the highest
// offset among msgs, so every earlier record of that partition counts as
// handled too: commit a record only after it and every earlier fetched
// record of its partition were handled (their effects stored, their
// follow-ups published). A committed record is never delivered again to
// the group; an uncommitted one is. Commit returns after the broker
// acknowledged the new offsets.
//
// Concurrency: safe for concurrent use, also while Fetch blocks.
type OffsetCommitter interface {
	Commit(ctx context.Context, msgs ...Message) error
}

// The Kafka implementation meets the contract.
var (
	_ Publisher       = (*Producer)(nil)
	_ Fetcher         = (*Consumer)(nil)
	_ OffsetCommitter = (*Consumer)(nil)
)
