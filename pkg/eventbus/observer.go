package eventbus

import (
	"strings"

	"github.com/braidhq/braid/proto-events/eventsv1"
)

// Observer is told what the event bus did, for metrics (pkg/metrics
// implements it). Its methods are called on the hot path, from any
// goroutine, and must be cheap and safe for concurrent use.
type Observer interface {
	// Lag reports, for the last record of a partition that Fetch returned,
	// how many records of that partition follow it (the partition's high
	// watermark - its offset - 1). topic is the logical name.
	Lag(topic string, partition int, lag int64)
	// DeadLettered reports n records of topic (the logical name of the
	// topic they came from) acknowledged on its dead-letter topic.
	DeadLettered(topic string, n int)
}

// observeLag reports the lag of each partition in msgs, a batch Fetch
// returns, as of its last record there.
func (c Config) observeLag(msgs []Message) {
	if c.Observer == nil {
		return
	}
	for i, m := range msgs {
		if i+1 < len(msgs) && msgs[i+1].Partition == m.Partition && msgs[i+1].Topic == m.Topic {
			continue // a later record of the same partition follows at once
		}
		c.Observer.Lag(m.Topic, m.Partition, max(m.raw.HighWaterMark-m.Offset-1, 0))
	}
}

// observeDeadLetters reports the dead letters among msgs, which Publish
// just had acknowledged.
func (c Config) observeDeadLetters(msgs []Message) {
	if c.Observer == nil {
		return
	}
	for _, m := range msgs {
		if src, ok := strings.CutSuffix(m.Topic, eventsv1.DLQSuffix); ok {
			c.Observer.DeadLettered(src, 1)
		}
	}
}
