package eventbus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"
)

// sendAll sends every sequence; each chunk records whether it was
// acknowledged. The first sequence is sent from the calling goroutine;
// only the others, if any, get one goroutine each.
func (p *Producer) sendAll(ctx context.Context, seqs []sequence) {
	var wg sync.WaitGroup
	for i := 1; i < len(seqs); i++ {
		wg.Go(func() { p.sendSequence(ctx, seqs[i]) })
	}
	if len(seqs) > 0 {
		p.sendSequence(ctx, seqs[0])
	}
	wg.Wait()
}

// sendSequence sends seq's requests one after another and stops at the
// first one not wholly acknowledged, marking the chunks after it
// errNotSent, so no later records of a partition are written after
// earlier ones that were not.
func (p *Producer) sendSequence(ctx context.Context, seq sequence) {
	for i, r := range seq {
		if !p.send(ctx, r) {
			for _, later := range seq[i+1:] {
				later.record(errNotSent)
			}
			return
		}
	}
}

// errNotSent marks records held back because an earlier part of their
// partition failed.
var errNotSent = errors.New("not sent: an earlier part of the partition failed")

// send writes r to its leader with RequiredAcks=all, records the answer of
// every chunk, and reports whether all of them were acknowledged. On any
// failure it forgets the topics' cached layout, and on a failure worth
// retrying (the leader moved or cannot be reached) it drops the metadata
// the failed request was routed with.
func (p *Producer) send(ctx context.Context, r *request) bool {
	gen := p.meta.Load()
	ctx, cancel := context.WithTimeout(ctx, p.cfg.AdminTimeout)
	defer cancel()
	m, err := p.tr.RoundTrip(ctx, p.client.Addr, r.produceRequest(produceTimeout(ctx)))
	if err != nil {
		r.record(fmt.Errorf("leader=%d: %w", r.leader, err))
	} else {
		r.check(m)
	}
	failed, stale := r.failures()
	if failed {
		p.parts.forget(r.topics()...)
	}
	if stale {
		p.refreshMetadata(gen)
	}
	return !failed
}

// produceTimeout is how long the broker may wait for the in-sync replicas:
// half the time left before ctx's deadline, as kafka-go's Client does, so
// the answer has time to come back.
func produceTimeout(ctx context.Context) int32 {
	d := time.Second
	if deadline, ok := ctx.Deadline(); ok {
		d = time.Until(deadline) / 2
	}
	return int32(min(max(d.Milliseconds(), 1), math.MaxInt32))
}

// produceRequest returns the produce request of r: one entry per topic,
// one record set per partition.
func (r *request) produceRequest(timeoutMs int32) *produce.Request {
	req := &produce.Request{Acks: int16(kafka.RequireAll), Timeout: timeoutMs}
	index := map[string]int{}
	for _, c := range r.chunks {
		i, ok := index[c.part.topic]
		if !ok {
			i = len(req.Topics)
			index[c.part.topic] = i
			req.Topics = append(req.Topics, produce.RequestTopic{Topic: c.part.topic})
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, produce.RequestPartition{
			Partition: int32(c.part.id),
			RecordSet: protocol.RecordSet{Records: protocol.NewRecordReader(c.kafkaRecords()...)},
		})
	}
	return req
}

// kafkaRecords returns c's records as kafka-go sends them, with readers of
// their keys and values made afresh on each call: sending drains them, and
// a retry sends the same records again.
func (c *chunk) kafkaRecords() []kafka.Record {
	out := make([]kafka.Record, len(c.records))
	for i, m := range c.records {
		out[i] = kafka.Record{Time: m.Time, Key: kafka.NewBytes(m.Key), Value: kafka.NewBytes(m.Value), Headers: m.Headers}
	}
	return out
}

// check records the answer of each chunk of r: acknowledged, or the
// partition's error.
func (r *request) check(m protocol.Message) {
	resp, ok := m.(*produce.Response)
	if !ok {
		r.record(fmt.Errorf("unexpected answer %T", m))
		return
	}
	type tp struct {
		topic string
		id    int32
	}
	got := map[tp]*produce.ResponsePartition{}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			got[tp{t.Topic, t.Partitions[j].Partition}] = &t.Partitions[j]
		}
	}
	for _, c := range r.chunks {
		c.setOutcome(partitionError(got[tp{c.part.topic, int32(c.part.id)}]))
	}
}

// partitionError returns the error of one partition's answer, nil if the
// records were written.
func partitionError(p *produce.ResponsePartition) error {
	var err error
	switch {
	case p == nil:
		return errors.New("no answer for the partition")
	case p.ErrorCode != 0 && p.ErrorMessage != "":
		err = fmt.Errorf("%w: %s", kafka.Error(p.ErrorCode), p.ErrorMessage)
	case p.ErrorCode != 0:
		err = kafka.Error(p.ErrorCode)
	}
	if len(p.RecordErrors) > 0 {
		e := p.RecordErrors[0]
		err = errors.Join(err, fmt.Errorf("%d records refused, first index %d: %s", len(p.RecordErrors), e.BatchIndex, e.BatchIndexErrorMessage))
	}
	return err
}

// record sets err as the outcome of every chunk of r.
func (r *request) record(err error) {
	for _, c := range r.chunks {
		c.setOutcome(err)
	}
}

// failures reports whether a chunk of r was not acknowledged, and whether
// one failed in a way that fresh metadata may cure.
func (r *request) failures() (failed, stale bool) {
	for _, c := range r.chunks {
		if c.err != nil {
			failed = true
			stale = stale || retriable(c.err)
		}
	}
	return failed, stale
}

// setOutcome records the answer for c: nil means acknowledged.
func (c *chunk) setOutcome(err error) {
	c.acked = err == nil
	c.err = err
	if err != nil && !contextEnded(err) {
		c.cause = err
	}
}

// contextEnded reports whether err is a call's context ending (its
// deadline or a cancel) rather than something the broker or the network
// said.
func contextEnded(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// failure returns c's error naming its topic, partition and record count;
// when the last try was cut short by the context, the error of the try
// before it comes too (both are in the chain).
func (c *chunk) failure() error {
	if c.cause != nil && c.cause != c.err && contextEnded(c.err) {
		return fmt.Errorf("publish %d records topic=%s partition=%d: %w (the try before: %w)", len(c.records), c.part.topic, c.part.id, c.err, c.cause)
	}
	return fmt.Errorf("publish %d records topic=%s partition=%d: %w", len(c.records), c.part.topic, c.part.id, c.err)
}
