package eventbus

import (
	"context"
	"fmt"
	"sync"
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
type Producer struct {
	cfg    Config
	client *kafka.Client
	tr     *kafka.Transport
	parts  *partitionCache
	hash   kafka.Hash

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
// do they go out in parallel. When the broker refuses some partitions the
// error names each one that was not acknowledged (topic, partition, record
// count); the records of partitions it does not name were acknowledged. On
// error some records may have been written (kafka-go has no idempotent
// producer) and a retry can duplicate them, so consumers dedupe. If ctx
// ends first, records may still be written after Publish returns.
func (p *Producer) Publish(ctx context.Context, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return fmt.Errorf("publish topic=%s: %w", msgs[0].Topic, ErrClosed)
	}
	parts, err := p.route(ctx, msgs)
	if err != nil {
		return err
	}
	if err := p.sendAll(ctx, plan(parts)); err != nil {
		return err
	}
	p.cfg.observeDeadLetters(msgs)
	return nil
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
	return &kafka.Transport{ClientID: cfg.ClientID, MetadataTTL: metadataTTL, TLS: cfg.TLS, SASL: cfg.SASL}
}
