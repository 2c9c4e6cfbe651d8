package eventbus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// Tail reads every partition of one topic from where it ended when the
// Tail was opened, without a consumer group: no join, no membership, no
// commits, nothing left behind in the brokers when it closes. It is for
// live views (the api's run events): a reader that must see every record
// appended after a known moment and nothing before it.
//
// Concurrency and Fetch behave as Consumer's: call Fetch from one goroutine
// at a time; Close may be called at any time from any goroutine, and a
// blocked Fetch then returns ErrClosed.
//
// Failover: each partition's kafka-go reader follows its partition's
// leader (it reconnects to the leader the metadata names, from the offset
// it had reached). Partitions added to the topic after OpenTail are read
// from their first record once the Tail sees them (it reads the topic's
// partition count every partitionWatch): all their records came after
// OpenTail.
type Tail struct {
	prefetch // one pump per partition
	topic    string
	cfg      Config // resolved
	wire     string // topic's name on the wire

	mu      sync.Mutex      // guards readers: the watch goroutine adds to it
	readers []*kafka.Reader // by partition

	cancel context.CancelFunc
	pumps  sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// OpenTail asks the brokers, within ctx and cfg.AdminTimeout, for topic's
// partitions (a logical name) and the end offset of each, and starts reading
// every partition from there. Once it returns, every record appended to the
// topic afterwards is delivered by Fetch, in order per partition; records
// appended before it was called are not. A topic that does not exist is an
// error (create topics first with EnsureTopics).
//
// Reader settings: one kafka-go reader per partition, at the listed
// offset, MinBytes 1, MaxWait of cfg, QueueCapacity min(cfg.FetchBuffer, kafkaQueueMax),
// readerDialer.
func OpenTail(ctx context.Context, cfg Config, topic string) (*Tail, error) {
	cfg, err := cfg.resolve("open tail topic=" + topic)
	if err != nil {
		return nil, err
	}
	wire := cfg.topic(topic)
	ends, err := partitionEnds(ctx, cfg, wire)
	if err != nil {
		return nil, fmt.Errorf("open tail topic=%s: %w", topic, err)
	}
	pumpCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t := &Tail{prefetch: newPrefetch(cfg), topic: topic, cfg: cfg, wire: wire, readers: make([]*kafka.Reader, 0, len(ends)), cancel: cancel}
	for p, off := range ends {
		r, err := t.reader(p, off)
		if err != nil {
			cancel()
			t.closeReaders()
			return nil, err
		}
		t.readers = append(t.readers, r)
	}
	for _, r := range t.readers {
		t.pumps.Go(func() { t.pump(pumpCtx, r) })
	}
	t.pumps.Go(func() { t.watch(pumpCtx) })
	return t, nil
}

// reader returns a reader of partition p from offset off.
func (t *Tail) reader(p int, off int64) (*kafka.Reader, error) {
	cfg := t.cfg
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: cfg.Brokers, Topic: t.wire, Partition: p, Dialer: readerDialer(cfg),
		MinBytes: 1, MaxBytes: maxMessageBytes, MaxWait: cfg.MaxWait, QueueCapacity: min(cfg.FetchBuffer, kafkaQueueMax),
		ErrorLogger: cfg.errorLogger(), Logger: cfg.infoLogger(),
	})
	if err := r.SetOffset(off); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("open tail topic=%s partition=%d offset=%d: %w", t.topic, p, off, err)
	}
	return r, nil
}

// watch reads the topic's partition count every partitionWatch until ctx
// ends, and reads each partition added since from its first record. A
// failed look is tried again at the next tick (the readers report the
// brokers' troubles through Fetch).
func (t *Tail) watch(ctx context.Context) {
	tick := time.NewTicker(partitionWatch)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := partitionCount(ctx, t.cfg, t.wire)
		if err != nil {
			continue
		}
		t.mu.Lock()
		for p := len(t.readers); p < n && ctx.Err() == nil; p++ {
			r, err := t.reader(p, kafka.FirstOffset)
			if err != nil {
				break
			}
			t.readers = append(t.readers, r)
			// This goroutine is one of pumps, so the count is above zero
			// and a Close waiting on it waits for this pump too.
			t.pumps.Go(func() { t.pump(ctx, r) })
		}
		t.mu.Unlock()
	}
}

// partitionCount asks the brokers how many partitions topic (a wire name) has.
func partitionCount(ctx context.Context, cfg Config, topic string) (int, error) {
	client, done := adminClient(cfg)
	defer done()
	tl, err := newPartitionCache(client).layout(ctx, topic)
	if err != nil {
		return 0, err
	}
	return len(tl.ids), nil
}

// partitionEnds returns the end offset (the next offset to be written) of each
// partition of topic (a wire name), by partition.
func partitionEnds(ctx context.Context, cfg Config, topic string) ([]int64, error) {
	client, done := adminClient(cfg)
	defer done()
	tl, err := newPartitionCache(client).layout(ctx, topic)
	if err != nil {
		return nil, err
	}
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: make([]kafka.OffsetRequest, len(tl.ids))}}
	for i, p := range tl.ids {
		req.Topics[topic][i] = kafka.LastOffsetOf(p)
	}
	resp, err := client.ListOffsets(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	ends := make([]int64, len(tl.ids))
	seen := make([]bool, len(tl.ids))
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("list offsets partition=%d: %w", po.Partition, po.Error)
		}
		if po.Partition < 0 || po.Partition >= len(ends) || po.LastOffset < 0 {
			return nil, fmt.Errorf("list offsets: answer names partition %d at offset %d, not one of 0..%d", po.Partition, po.LastOffset, len(ends)-1)
		}
		ends[po.Partition], seen[po.Partition] = po.LastOffset, true
	}
	for p, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("list offsets: no end offset for partition %d", p)
		}
	}
	return ends, nil
}

// Fetch blocks until at least one record is available (or ctx ends, or the
// tail is closed), then returns it with every further record already
// prefetched, up to limit records in all, as Consumer.Fetch does. A non-nil
// error other than ErrClosed or ctx's error is transient (a broker
// unreachable): the tail keeps retrying, and the caller may call Fetch again.
func (t *Tail) Fetch(ctx context.Context, limit int) ([]Message, error) {
	return t.fetch(ctx, limit, "tail topic="+t.topic)
}

// Close stops reading and closes the readers' connections. A Fetch blocked
// in another goroutine returns ErrClosed. Close is safe to call twice.
func (t *Tail) Close() error {
	t.closeOnce.Do(func() {
		close(t.stop)
		t.cancel()
		t.pumps.Wait()
		t.closeErr = t.closeReaders()
	})
	return t.closeErr
}

// closeReaders closes every reader opened so far.
func (t *Tail) closeReaders() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for _, r := range t.readers {
		if r == nil {
			continue
		}
		if err := r.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close tail topic=%s: %w", t.topic, err)
	}
	return nil
}
