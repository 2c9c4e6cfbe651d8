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

// recordSize bounds the bytes m takes inside a record batch (as the
// kafka.Message toKafka makes of it: the same key, value and headers).
func recordSize(m Message) int {
	n := recordOverhead + len(m.Key) + len(m.Value)
	for _, h := range m.Headers {
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

	// sizes is how many records each chunk will hold, counted by plan
	// before any is added, so that each chunk's records are allocated
	// once (kafka.Message is about 200 bytes; a fan-out's batch is
	// thousands of them). planned is the bytes of the last planned chunk.
	sizes   []int
	planned int
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

// plan counts a record of size bytes into p's chunks, as add will cut them.
func (p *partition) plan(size int) {
	if len(p.sizes) == 0 || p.planned+size > maxRequestBytes {
		p.sizes = append(p.sizes, 0)
		p.planned = 0
	}
	p.sizes[len(p.sizes)-1]++
	p.planned += size
}

// add appends a record of size bytes to p, opening a chunk when the last
// one is full (sized as plan counted it, when it did).
func (p *partition) add(r kafka.Message, size int) {
	last := len(p.chunks) - 1
	if last < 0 || p.chunks[last].bytes+size > maxRequestBytes {
		c := &chunk{part: p}
		if n := len(p.chunks); n < len(p.sizes) {
			c.records = make([]kafka.Message, 0, p.sizes[n])
		}
		p.chunks = append(p.chunks, c)
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
	type routed struct {
		part *partition
		size int
	}
	to := make([]routed, len(msgs))
	for i, m := range msgs {
		if m.Topic == "" {
			return nil, fmt.Errorf("publish message %d key=%s: empty topic", i, m.Key)
		}
		topic := p.cfg.topic(m.Topic)
		tl, err := p.layout(ctx, topic)
		if err != nil {
			return nil, fmt.Errorf("publish topic=%s: %w", topic, err)
		}
		k := tp{topic, p.hash.Balance(kafka.Message{Key: m.Key}, tl.ids...)}
		part := open[k]
		if part == nil {
			part = &partition{topic: k.topic, id: k.id, leader: tl.leaders[k.id]}
			open[k] = part
			out = append(out, part)
		}
		to[i] = routed{part, recordSize(m)}
		part.plan(to[i].size)
	}
	now := time.Now()
	for i, m := range msgs {
		km := p.cfg.toKafka(m)
		km.Time = now
		to[i].part.add(km, to[i].size)
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
