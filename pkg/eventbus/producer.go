package eventbus

import (
	"context"
	"errors"
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
// Publish sends one produce request per partition it touches, all in
// parallel, so a batch costs one round trip however many records it holds.
// kafka-go's Writer cannot do that without waiting: it closes a batch only
// when BatchSize is reached or BatchTimeout fires, and with BatchSize 1 it
// sends n records for one partition as n sequential requests.
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
// partition in the order given. On error some records may have been written
// (kafka-go has no idempotent producer) and a retry can duplicate them, so
// consumers dedupe. If ctx ends first, records may still be written after
// Publish returns.
func (p *Producer) Publish(ctx context.Context, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return fmt.Errorf("publish topic=%s: %w", msgs[0].Topic, ErrClosed)
	}
	batches, err := p.route(ctx, msgs)
	if err != nil {
		return err
	}
	errs := make([]error, len(batches))
	var wg sync.WaitGroup
	for i, b := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.produce(ctx, b)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// batch is the records of one Publish bound for one partition, at most
// maxRequestBytes of records (recordSize each).
type batch struct {
	topic     string
	partition int
	records   []kafka.Record
	bytes     int
}

// maxRequestBytes bounds one produce request (the broker's default limit is 1 MiB per batch).
const maxRequestBytes = 900 << 10

// Framing a record batch adds beyond the bytes of keys, values and headers:
// per record its length, attributes, timestamp and offset deltas, key and
// value lengths and header count (varints, at most 5 bytes each); per
// header its two lengths. Counting them keeps a batch of many small
// records (thousands of dispatches) under the broker's limit.
const (
	recordOverhead = 32
	headerOverhead = 10
)

// recordSize bounds the bytes km takes inside a record batch.
func recordSize(km kafka.Message) int {
	n := recordOverhead + len(km.Key) + len(km.Value)
	for _, h := range km.Headers {
		n += headerOverhead + len(h.Key) + len(h.Value)
	}
	return n
}

// route assigns each record its partition and groups records into batches.
func (p *Producer) route(ctx context.Context, msgs []Message) ([]*batch, error) {
	type tp struct {
		topic     string
		partition int
	}
	open := map[tp]*batch{}
	var out []*batch
	now := time.Now()
	for i, m := range msgs {
		if m.Topic == "" {
			return nil, fmt.Errorf("publish message %d key=%s: empty topic", i, m.Key)
		}
		km := p.cfg.toKafka(m)
		n, err := p.parts.count(ctx, km.Topic)
		if err != nil {
			return nil, fmt.Errorf("publish topic=%s: %w", km.Topic, err)
		}
		k := tp{km.Topic, p.hash.Balance(km, allPartitions(n)...)}
		size := recordSize(km)
		b := open[k]
		if b == nil || b.bytes+size > maxRequestBytes {
			b = &batch{topic: k.topic, partition: k.partition}
			open[k] = b
			out = append(out, b)
		}
		b.records = append(b.records, kafka.Record{Time: now, Key: kafka.NewBytes(km.Key), Value: kafka.NewBytes(km.Value), Headers: km.Headers})
		b.bytes += size
	}
	return out, nil
}

// produce sends one batch and checks the broker's answer.
func (p *Producer) produce(ctx context.Context, b *batch) error {
	resp, err := p.client.Produce(ctx, &kafka.ProduceRequest{
		Topic: b.topic, Partition: b.partition, RequiredAcks: kafka.RequireAll,
		Records: kafka.NewRecordReader(b.records...),
	})
	if err == nil && resp.Error != nil {
		err = resp.Error
	}
	if err == nil {
		for _, rerr := range resp.RecordErrors {
			err = rerr
			break
		}
	}
	if err != nil {
		p.parts.forget(b.topic) // leadership or partition count may have changed
		return fmt.Errorf("publish %d records topic=%s partition=%d: %w", len(b.records), b.topic, b.partition, err)
	}
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
	return &kafka.Transport{ClientID: cfg.ClientID, MetadataTTL: metadataTTL}
}
