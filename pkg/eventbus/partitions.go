package eventbus

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// partitionTTL bounds how long a topic's partition count is trusted.
const partitionTTL = 30 * time.Second

// partitionCache remembers each topic's partition count for the hash
// balancer. Safe for concurrent use.
type partitionCache struct {
	client *kafka.Client
	mu     sync.Mutex
	m      map[string]cachedCount
}

type cachedCount struct {
	n  int
	at time.Time
}

func newPartitionCache(c *kafka.Client) *partitionCache {
	return &partitionCache{client: c, m: map[string]cachedCount{}}
}

// count returns topic's partition count, asking the brokers when unknown or stale.
func (c *partitionCache) count(ctx context.Context, topic string) (int, error) {
	c.mu.Lock()
	cc, ok := c.m[topic]
	c.mu.Unlock()
	if ok && time.Since(cc.at) < partitionTTL {
		return cc.n, nil
	}
	resp, err := c.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, fmt.Errorf("metadata: %w", err)
	}
	for _, t := range resp.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return 0, fmt.Errorf("metadata: %w", t.Error)
		}
		if len(t.Partitions) == 0 {
			break
		}
		c.mu.Lock()
		c.m[topic] = cachedCount{n: len(t.Partitions), at: time.Now()}
		c.mu.Unlock()
		return len(t.Partitions), nil
	}
	return 0, fmt.Errorf("metadata: topic %s not found (run EnsureTopics first)", topic)
}

// forget drops topic's cached count.
func (c *partitionCache) forget(topic string) {
	c.mu.Lock()
	delete(c.m, topic)
	c.mu.Unlock()
}

func allPartitions(n int) []int {
	ps := make([]int, n)
	for i := range ps {
		ps[i] = i
	}
	return ps
}
