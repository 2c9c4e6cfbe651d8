package eventbus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// partitionTTL bounds how long a topic's partitions and leaders are trusted.
const partitionTTL = 30 * time.Second

// partitionCache remembers each topic's partitions (for the hash balancer)
// and their leader brokers (to group a Publish's records into one request
// per leader). Safe for concurrent use.
type partitionCache struct {
	client *kafka.Client
	mu     sync.Mutex
	m      map[string]topicLayout
}

// topicLayout is what the cache knows of one topic. Its slices are shared
// by every reader and never modified.
type topicLayout struct {
	// ids lists the partitions 0..n-1, as the balancer takes them.
	ids []int
	// leaders holds the leader broker id of each partition, by partition.
	leaders []int
	at      time.Time
}

func newPartitionCache(c *kafka.Client) *partitionCache {
	return &partitionCache{client: c, m: map[string]topicLayout{}}
}

// layout returns topic's partitions and leaders, asking the brokers when
// unknown or stale.
func (c *partitionCache) layout(ctx context.Context, topic string) (topicLayout, error) {
	c.mu.Lock()
	tl, ok := c.m[topic]
	c.mu.Unlock()
	if ok && time.Since(tl.at) < partitionTTL {
		return tl, nil
	}
	resp, err := c.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return topicLayout{}, fmt.Errorf("metadata: %w", err)
	}
	for _, t := range resp.Topics {
		if t.Name != topic {
			continue
		}
		if errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
			return topicLayout{}, fmt.Errorf("metadata: topic %s: %w: %w", topic, errUnknownTopic, t.Error)
		}
		if t.Error != nil {
			return topicLayout{}, fmt.Errorf("metadata: %w", t.Error)
		}
		if len(t.Partitions) == 0 {
			break
		}
		tl, err := newTopicLayout(t.Partitions)
		if err != nil {
			return topicLayout{}, fmt.Errorf("metadata topic=%s: %w", topic, err)
		}
		c.mu.Lock()
		c.m[topic] = tl
		c.mu.Unlock()
		return tl, nil
	}
	return topicLayout{}, fmt.Errorf("metadata: topic %s: %w", topic, errUnknownTopic)
}

// errUnknownTopic reports a topic the cluster's metadata does not list.
var errUnknownTopic = errors.New("not found (run EnsureTopics first)")

// newTopicLayout returns the layout of a topic whose metadata lists ps.
func newTopicLayout(ps []kafka.Partition) (topicLayout, error) {
	tl := topicLayout{ids: make([]int, len(ps)), leaders: make([]int, len(ps)), at: time.Now()}
	seen := make([]bool, len(ps))
	for _, p := range ps {
		if p.ID < 0 || p.ID >= len(ps) || seen[p.ID] {
			return topicLayout{}, fmt.Errorf("partition %d outside 0..%d or listed twice", p.ID, len(ps)-1)
		}
		seen[p.ID] = true
		tl.leaders[p.ID] = p.Leader.ID
	}
	for i := range tl.ids {
		tl.ids[i] = i
	}
	return tl, nil
}

// forget drops what is cached of topics.
func (c *partitionCache) forget(topics ...string) {
	c.mu.Lock()
	for _, t := range topics {
		delete(c.m, t)
	}
	c.mu.Unlock()
}

// clear drops what is cached of every topic.
func (c *partitionCache) clear() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}
