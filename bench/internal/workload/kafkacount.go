package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// Bounds of the Kafka counter's requests.
const (
	kafkaCountTimeout = 10 * time.Second // one metadata, offsets or fetch request
	kafkaFetchBytes   = 8 << 20          // the most one fetch returns
)

// kafkaCounter counts what a stack wrote to its topics (every topic under
// its prefix): records from the partitions' high watermarks, and bytes by
// reading those records back. It only reads.
type kafkaCounter struct {
	client *kafka.Client
	prefix string
}

// partitionKey names one partition of one topic.
type partitionKey struct {
	topic     string
	partition int
}

// newKafkaCounter counts the topics named prefix… on brokers.
func newKafkaCounter(brokers []string, prefix string) *kafkaCounter {
	return &kafkaCounter{client: &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: kafkaCountTimeout}, prefix: prefix}
}

// watermarks returns the high watermark (the offset the next record will
// get) of every partition of the counter's topics.
func (k *kafkaCounter) watermarks(ctx context.Context) (map[partitionKey]int64, error) {
	meta, err := k.client.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, fmt.Errorf("kafka metadata: %w", err)
	}
	reqs := map[string][]kafka.OffsetRequest{}
	for _, t := range meta.Topics {
		if !strings.HasPrefix(t.Name, k.prefix) {
			continue
		}
		for _, p := range t.Partitions {
			reqs[t.Name] = append(reqs[t.Name], kafka.LastOffsetOf(p.ID))
		}
	}
	resp, err := k.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: reqs})
	if err != nil {
		return nil, fmt.Errorf("kafka list offsets of %d topics: %w", len(reqs), err)
	}
	out := map[partitionKey]int64{}
	for topic, parts := range resp.Topics {
		for _, p := range parts {
			if p.Error != nil {
				return nil, fmt.Errorf("kafka list offsets %s/%d: %w", topic, p.Partition, p.Error)
			}
			out[partitionKey{topic, p.Partition}] = p.LastOffset
		}
	}
	return out, nil
}

// between reads the records of every partition from its offset in from (0
// when it is not there: a topic created since) up to its offset in to,
// and returns how many there were and their bytes: key, value and header
// names and values, as produced (the services do not compress).
func (k *kafkaCounter) between(ctx context.Context, from, to map[partitionKey]int64) (records, bytes int64, err error) {
	for pk, end := range to {
		n, b, err := k.readRange(ctx, pk, from[pk], end)
		if err != nil {
			return 0, 0, err
		}
		records, bytes = records+n, bytes+b
	}
	return records, bytes, nil
}

// readRange reads the records of one partition with offsets in [start, end).
func (k *kafkaCounter) readRange(ctx context.Context, pk partitionKey, start, end int64) (records, bytes int64, err error) {
	for off := start; off < end; {
		resp, err := k.client.Fetch(ctx, &kafka.FetchRequest{Topic: pk.topic, Partition: pk.partition, Offset: off,
			MinBytes: 1, MaxBytes: kafkaFetchBytes, MaxWait: 100 * time.Millisecond})
		if err == nil {
			err = resp.Error
		}
		if err != nil {
			return 0, 0, fmt.Errorf("kafka fetch %s/%d at %d: %w", pk.topic, pk.partition, off, err)
		}
		next, n, b, err := sumRecords(resp.Records, off, end)
		if err != nil {
			return 0, 0, fmt.Errorf("kafka read %s/%d at %d: %w", pk.topic, pk.partition, off, err)
		}
		if next == off {
			return 0, 0, fmt.Errorf("kafka fetch %s/%d at %d: no record below %d", pk.topic, pk.partition, off, end)
		}
		off, records, bytes = next, records+n, bytes+b
	}
	return records, bytes, nil
}

// sumRecords counts the records of rr with offsets in [from, end) and
// their bytes, and returns the offset after the last one counted.
func sumRecords(rr kafka.RecordReader, from, end int64) (next, records, bytes int64, err error) {
	next = from
	for {
		rec, err := rr.ReadRecord()
		if errors.Is(err, io.EOF) {
			return next, records, bytes, nil
		}
		if err != nil {
			return next, records, bytes, err
		}
		if rec.Offset < from || rec.Offset >= end {
			continue // a batch starts before from, or the log went on past end
		}
		bytes += recordBytes(rec)
		records, next = records+1, rec.Offset+1
	}
}

// recordBytes is the size of a record's key, value and headers.
func recordBytes(r *kafka.Record) int64 {
	var n int
	if r.Key != nil {
		n += r.Key.Len()
	}
	if r.Value != nil {
		n += r.Value.Len()
	}
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}
