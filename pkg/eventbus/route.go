package eventbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/segmentio/kafka-go"
)

// maxRequestBytes bounds the records of one produce request (the broker's
// default limit is 1 MiB per batch).
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

// partition is the records of one Publish bound for one partition, in the
// order given, cut into chunks of at most maxRequestBytes each (a record
// larger than that is a chunk of its own).
type partition struct {
	topic  string
	id     int
	leader int
	chunks []*chunk
}

// chunk is consecutive records of one partition that go in one request.
// Its outcome is set by each send: acked, or err. records keeps the bytes,
// not kafka-go's readers of them, which a send drains and a retry must
// read again (see kafkaRecords).
type chunk struct {
	part    *partition
	records []kafka.Message
	bytes   int
	acked   bool
	err     error
	// cause is the latest error other than the call's context ending: when
	// the last try was cut short by PublishTimeout, it says why the tries
	// before it failed.
	cause error
}

// add appends a record of size bytes to p, opening a chunk when the last
// one is full.
func (p *partition) add(r kafka.Message, size int) {
	last := len(p.chunks) - 1
	if last < 0 || p.chunks[last].bytes+size > maxRequestBytes {
		p.chunks = append(p.chunks, &chunk{part: p})
		last++
	}
	c := p.chunks[last]
	c.records = append(c.records, r)
	c.bytes += size
}

// route assigns each record its partition (kafka-go's Hash balancer on the
// key) and returns the partitions touched, in order of first use. It fails,
// sending nothing, when a topic is empty or unknown.
func (p *Producer) route(ctx context.Context, msgs []Message) ([]*partition, error) {
	type tp struct {
		topic string
		id    int
	}
	open := map[tp]*partition{}
	var out []*partition
	now := time.Now()
	for i, m := range msgs {
		if m.Topic == "" {
			return nil, fmt.Errorf("publish message %d key=%s: empty topic", i, m.Key)
		}
		km := p.cfg.toKafka(m)
		tl, err := p.layout(ctx, km.Topic)
		if err != nil {
			return nil, fmt.Errorf("publish topic=%s: %w", km.Topic, err)
		}
		k := tp{km.Topic, p.hash.Balance(km, tl.ids...)}
		part := open[k]
		if part == nil {
			part = &partition{topic: k.topic, id: k.id, leader: tl.leaders[k.id]}
			open[k] = part
			out = append(out, part)
		}
		km.Time = now
		part.add(km, recordSize(km))
	}
	return out, nil
}

// layout returns topic's partitions and leaders. A topic the metadata does
// not list fails at once; other failures to read the metadata are tried
// again with backoff, metadataTries times in all: kafka-go tries every
// bootstrap broker in turn, so failing that often is the whole cluster out
// of reach, which the caller hears of at once (see metadataTries).
func (p *Producer) layout(ctx context.Context, topic string) (topicLayout, error) {
	for try := 0; ; try++ {
		tl, err := p.parts.layout(ctx, topic)
		if err == nil || errors.Is(err, errUnknownTopic) || !retriable(err) || try+1 >= metadataTries {
			return tl, err
		}
		if clock.Sleep(ctx, backoff(try)) != nil {
			return tl, fmt.Errorf("gave up after %d tries: %w: %w", try+1, ctx.Err(), err)
		}
	}
}
