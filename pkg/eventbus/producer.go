package eventbus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
)

// Producer publishes records synchronously: a nil error from Publish means
// every record was acknowledged by all in-sync replicas. It is safe for
// concurrent use. Close waits for Publish calls in flight; later calls
// return ErrClosed.
//
// Publish sends one produce request per leader broker it touches, carrying
// every topic and partition that broker leads, so a batch costs one round
// trip (and, on one broker, one request) however many records and
// partitions it holds. kafka-go's Writer cannot do that without waiting: it
// closes a batch only when BatchSize is reached or BatchTimeout fires, and
// with BatchSize 1 it sends n records for one partition as n sequential
// requests.
//
// Failover: when a partition's leader moved, is being elected or cannot be
// reached, Publish fetches fresh metadata and sends the partition's
// records again to its new leader, with backoff, until cfg.PublishTimeout
// or ctx ends (see deliver).
type Producer struct {
	cfg    Config
	client *kafka.Client
	tr     *kafka.Transport
	parts  *partitionCache
	hash   kafka.Hash
	// meta counts the times the transport's metadata was dropped
	// (refreshMetadata); a send that fails with the metadata of generation
	// g drops it only if nobody did since.
	meta atomic.Uint64

	// mu is held shared by each Publish and exclusively by Close, so Close
	// waits for publishes in flight.
	mu     sync.RWMutex
	closed bool
}

// NewProducer returns a Producer for cfg. It does not contact the brokers;
// the first Publish does. Records are placed with kafka-go's Hash balancer
// on the key (so one run's records share a partition and keep their order)
// and written with RequiredAcks=RequireAll.
func NewProducer(cfg Config) (*Producer, error) {
	cfg, err := cfg.resolve("new producer")
	if err != nil {
		return nil, err
	}
	tr := newTransport(cfg)
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: cfg.AdminTimeout, Transport: tr}
	return &Producer{cfg: cfg, client: client, tr: tr, parts: newPartitionCache(client)}, nil
}

// Publish writes msgs and returns after every one is acknowledged by all
// in-sync replicas, or with an error. Records with the same key land in one
// partition in the order given. Every record's partition and its leader are
// known before anything is sent: an empty or unknown topic fails the whole
// call and no record is written. Then the records go out as one produce
// request per leader broker, several for a leader whose records exceed
// about 900 KiB (a partition bigger than that is sent in parts, each after
// the previous one is acknowledged); only when there are several requests
// do they go out in parallel.
//
// A partition whose leader moved, is being elected or cannot be reached
// (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, NOT_ENOUGH_REPLICAS, a
// refused or reset connection; see retriable) is sent again, from its
// first record not acknowledged, to the leader fresh metadata names, with
// backoff, until it is acknowledged or cfg.PublishTimeout or ctx ends. A
// partition's records never go out ahead of an earlier record of it that
// is not acknowledged, and the partition keyed records are hashed to does
// not change between tries, so one key's order holds. A partition the
// broker refuses for good (a record too large) is not sent again.
//
// On error, the error names each partition not acknowledged (topic,
// partition, record count) with its last error; the records of partitions
// it does not name were acknowledged. Some records may have been written
// (kafka-go has no idempotent producer; a retried request whose answer was
// lost writes its records twice), so consumers dedupe. If ctx ends first,
// records may still be written after Publish returns.
func (p *Producer) Publish(ctx context.Context, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return fmt.Errorf("publish topic=%s: %w", msgs[0].Topic, ErrClosed)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.PublishTimeout)
	defer cancel()
	parts, err := p.route(ctx, msgs)
	if err != nil {
		return err
	}
	if err := p.deliver(ctx, parts); err != nil {
		return err
	}
	p.cfg.observeDeadLetters(msgs)
	return nil
}

// Prepare does now what the first Publish to topics would do before it
// sends anything: it looks up their partitions and leaders and opens the
// connections to the brokers. Services call it at start-up, after
// EnsureTopics, so that the first run of a fresh stack does not wait for
// it on every hop. It takes at most cfg.AdminTimeout. An error only means
// the first Publish does this work.
func (p *Producer) Prepare(ctx context.Context, topics ...string) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return fmt.Errorf("prepare: %w", ErrClosed)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.AdminTimeout)
	defer cancel()
	var errs []error
	// One read-only request per leader (kafka-go's transport splits a
	// ListOffsets by leader) opens the connections a produce request goes
	// out on; the layouts hold what route needs.
	offsets := map[string][]kafka.OffsetRequest{}
	for _, t := range topics {
		name := p.cfg.topic(t)
		tl, err := p.layout(ctx, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("prepare topic=%s: %w", t, err))
			continue
		}
		for _, id := range tl.ids {
			offsets[name] = append(offsets[name], kafka.LastOffsetOf(id))
		}
	}
	if len(offsets) > 0 {
		if _, err := p.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: offsets}); err != nil {
			errs = append(errs, fmt.Errorf("prepare: connect to the leaders: %w", err))
		}
	}
	return errors.Join(errs...)
}

// refreshMetadata drops the transport's connection pool, and with it the
// cluster metadata the failed send of generation gen was routed with,
// unless another send did so since: kafka-go's transport serves metadata
// from a cache it refreshes only every metadataTTL and routes each produce
// request by that cache, so without this a retry would go to the old
// leader again until the next refresh. The next request opens a new pool,
// which fetches metadata before it sends anything. Requests in flight
// finish on the old pool, which closes once they are done.
func (p *Producer) refreshMetadata(gen uint64) {
	if p.meta.CompareAndSwap(gen, gen+1) {
		p.tr.CloseIdleConnections()
		p.parts.clear()
	}
}

// Close waits for Publish calls in flight and releases connections. Publish
// after Close returns ErrClosed. Close is safe to call twice.
func (p *Producer) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.tr.CloseIdleConnections()
	}
	return nil
}

// metadataTTL is how long a transport serves topic metadata from its cache.
const metadataTTL = time.Second

// newTransport returns the kafka-go transport for cfg's client id. Metadata
// is refreshed every second (kafka-go's default is 6 s), so topics created by
// another process become writable quickly.
func newTransport(cfg Config) *kafka.Transport {
	return &kafka.Transport{ClientID: cfg.ClientID, MetadataTTL: metadataTTL, TLS: cfg.TLS, SASL: cfg.SASL, Dial: cfg.Dial}
}
