package eventbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
)

// Producer publishes records synchronously: a nil error from Publish means
// every record was acknowledged by all in-sync replicas. It is safe for
// concurrent use. Close waits for Publish calls in flight; later calls
// return ErrClosed.
type Producer struct {
	cfg       Config
	w         *kafka.Writer
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// NewProducer returns a Producer for cfg. It does not contact the brokers;
// the first Publish does.
//
// Writer settings and why: RequiredAcks=RequireAll (kafka-go's zero value is
// fire-and-forget); Balancer kafka.Hash on the key (the default round-robin
// would scatter one run's records); BatchSize 1, because kafka-go closes a
// batch only when it is full or BatchTimeout fires, so with a larger
// BatchSize a Publish of fewer records than BatchSize per partition waits for
// the timer; BatchBytes 1 MiB, the largest record accepted; no Async (it
// drops errors); no AllowAutoTopicCreation (EnsureTopics creates topics).
func NewProducer(cfg Config) (*Producer, error) {
	cfg, err := cfg.resolve("new producer")
	if err != nil {
		return nil, err
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchSize:    1,
		BatchBytes:   maxMessageBytes,
		BatchTimeout: cfg.BatchTimeout,
		Transport:    newTransport(cfg),
		ErrorLogger:  cfg.errorLogger(),
	}
	return &Producer{cfg: cfg, w: w}, nil
}

// Publish writes msgs and returns after every one is acknowledged by all
// in-sync replicas, or with an error. Records with the same key land in one
// partition in the order given; records for different partitions are sent in
// parallel. Each record is its own produce request, so n records for one
// partition cost n round trips in sequence. On error some records may have been written (kafka-go has no
// idempotent producer) and a retry can duplicate them, so consumers dedupe.
// If ctx ends first, records may still be written after Publish returns.
func (p *Producer) Publish(ctx context.Context, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if p.closed.Load() {
		return fmt.Errorf("publish topic=%s: %w", msgs[0].Topic, ErrClosed)
	}
	kms := make([]kafka.Message, len(msgs))
	for i, m := range msgs {
		if m.Topic == "" {
			return fmt.Errorf("publish message %d key=%s: empty topic", i, m.Key)
		}
		kms[i] = p.cfg.toKafka(m)
	}
	if err := p.w.WriteMessages(ctx, kms...); err != nil {
		if errors.Is(err, io.ErrClosedPipe) {
			err = ErrClosed
		}
		return fmt.Errorf("publish %d messages topic=%s key=%s: %w", len(msgs), msgs[0].Topic, msgs[0].Key, err)
	}
	return nil
}

// Close waits for records in flight and releases connections. Publish after
// Close returns ErrClosed. Close is safe to call twice.
func (p *Producer) Close() error {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		if err := p.w.Close(); err != nil {
			p.closeErr = fmt.Errorf("close producer: %w", err)
		}
	})
	return p.closeErr
}

// metadataTTL is how long a transport serves topic metadata from its cache.
const metadataTTL = time.Second

// newTransport returns the kafka-go transport for cfg's client id. Metadata
// is refreshed every second (kafka-go's default is 6 s), so topics created by
// another process become writable quickly.
func newTransport(cfg Config) *kafka.Transport {
	return &kafka.Transport{ClientID: cfg.ClientID, MetadataTTL: metadataTTL}
}
