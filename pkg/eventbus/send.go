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

// sendAll sends every sequence and joins their errors. The first sequence
// is sent from the calling goroutine; only the others, if any, get one
// goroutine each.
func (p *Producer) sendAll(ctx context.Context, seqs []sequence) error {
	errs := make([]error, len(seqs))
	var wg sync.WaitGroup
	for i := 1; i < len(seqs); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.sendSequence(ctx, seqs[i])
		}()
	}
	if len(seqs) > 0 {
		errs[0] = p.sendSequence(ctx, seqs[0])
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sendSequence sends seq's requests one after another and stops at the
// first failure, so no later records of a partition are written after
// earlier ones that were not.
func (p *Producer) sendSequence(ctx context.Context, seq sequence) error {
	for i, r := range seq {
		if err := p.send(ctx, r); err != nil {
			errs := []error{err}
			for _, later := range seq[i+1:] {
				errs = append(errs, later.fail(errNotSent))
			}
			return errors.Join(errs...)
		}
	}
	return nil
}

// errNotSent marks records held back because an earlier part of their
// partition failed.
var errNotSent = errors.New("not sent: an earlier part of the partition failed")

// send writes r to its leader with RequiredAcks=all and checks the answer
// of every partition. On any error it forgets the topics' cached layout:
// leadership or the partition count may have changed.
func (p *Producer) send(ctx context.Context, r *request) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.AdminTimeout)
	defer cancel()
	m, err := p.tr.RoundTrip(ctx, p.client.Addr, r.produceRequest(produceTimeout(ctx)))
	if err != nil {
		err = r.fail(fmt.Errorf("leader=%d: %w", r.leader, err))
	} else {
		err = r.check(m)
	}
	if err != nil {
		p.parts.forget(r.topics()...)
	}
	return err
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
			RecordSet: protocol.RecordSet{Records: protocol.NewRecordReader(c.records...)},
		})
	}
	return req
}

// check returns an error naming each partition of r the broker did not
// acknowledge, with its record count; the records of partitions it does
// not name were acknowledged.
func (r *request) check(m protocol.Message) error {
	resp, ok := m.(*produce.Response)
	if !ok {
		return r.fail(fmt.Errorf("unexpected answer %T", m))
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
	var errs []error
	for _, c := range r.chunks {
		if err := partitionError(got[tp{c.part.topic, int32(c.part.id)}]); err != nil {
			errs = append(errs, c.fail(err))
		}
	}
	return errors.Join(errs...)
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

// fail returns err naming every partition of r with its record count.
func (r *request) fail(err error) error {
	errs := make([]error, len(r.chunks))
	for i, c := range r.chunks {
		errs[i] = c.fail(err)
	}
	return errors.Join(errs...)
}

// fail returns err naming c's topic, partition and record count.
func (c *chunk) fail(err error) error {
	return fmt.Errorf("publish %d records topic=%s partition=%d: %w", len(c.records), c.part.topic, c.part.id, err)
}
