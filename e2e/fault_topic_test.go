package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// readTopic reads every record of every partition of topic, from the first
// offset to the high watermark at the time of the call. brokers is a
// comma-separated list; the first that answers is asked for the leaders.
func readTopic(ctx context.Context, brokers, topic string) ([]kafka.Message, error) {
	var conn *kafka.Conn
	var err error
	var broker string
	for _, broker = range strings.Split(brokers, ",") {
		if conn, err = kafka.DialContext(ctx, "tcp", broker); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read topic %s: %w", topic, err)
	}
	parts, err := conn.ReadPartitions(topic)
	_ = conn.Close()
	if err != nil {
		return nil, fmt.Errorf("read topic %s partitions: %w", topic, err)
	}
	var out []kafka.Message
	for _, p := range parts {
		msgs, err := readPartition(ctx, broker, topic, p.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
	}
	return out, nil
}

// readPartition reads one partition from its first offset to its high
// watermark, one fetch batch at a time.
func readPartition(ctx context.Context, broker, topic string, partition int) ([]kafka.Message, error) {
	pc, err := kafka.DialLeader(ctx, "tcp", broker, topic, partition)
	if err != nil {
		return nil, fmt.Errorf("read %s/%d: %w", topic, partition, err)
	}
	defer pc.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = pc.SetDeadline(dl)
	}
	first, last, err := pc.ReadOffsets()
	if err != nil || last <= first {
		return nil, err
	}
	if _, err := pc.Seek(first, kafka.SeekAbsolute); err != nil {
		return nil, err
	}
	var out []kafka.Message
	for next := first; next < last; {
		b := pc.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 100 * time.Millisecond})
		for {
			m, err := b.ReadMessage()
			if err != nil {
				break
			}
			out, next = append(out, m), m.Offset+1
		}
		if err := b.Close(); err != nil {
			return nil, fmt.Errorf("read %s/%d at offset %d of %d: %w", topic, partition, next, last, err)
		}
	}
	return out, nil
}
