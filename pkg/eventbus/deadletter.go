package eventbus

import (
	"context"
	"fmt"
	"strconv"

	"github.com/braidhq/braid/proto-events/eventsv1"
)

// DeadLetter publishes m to its dead-letter topic (DeadLetterMessage). It
// is synchronous like Publish; commit m only after it returns nil.
func (p *Producer) DeadLetter(ctx context.Context, m Message, reason string) error {
	if err := p.Publish(ctx, DeadLetterMessage(m, reason)); err != nil {
		return fmt.Errorf("dead-letter topic=%s partition=%d offset=%d: %w", m.Topic, m.Partition, m.Offset, err)
	}
	return nil
}

// DeadLetterMessage is m's record on its dead-letter topic <m.Topic>.dlq:
// the same key and value, m's headers, and the headers dlq-reason (reason)
// and dlq-source-topic/-partition/-offset locating the original record. A
// caller that publishes it with other messages commits m only after that
// publish succeeded.
func DeadLetterMessage(m Message, reason string) Message {
	h := append(make(Headers, 0, len(m.Headers)+4), m.Headers...)
	h.Set(eventsv1.HeaderDLQReason, reason)
	h.Set(eventsv1.HeaderDLQTopic, m.Topic)
	h.Set(eventsv1.HeaderDLQPartition, strconv.Itoa(m.Partition))
	h.Set(eventsv1.HeaderDLQOffset, strconv.FormatInt(m.Offset, 10))
	return Message{Topic: eventsv1.DLQ(m.Topic), Key: m.Key, Value: m.Value, Headers: h}
}
