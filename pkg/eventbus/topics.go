package eventbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
)

// topicPoll is the pause between metadata checks while waiting for topics.
const topicPoll = 50 * time.Millisecond

// EnsureTopics creates each topic and its dead-letter topic (eventsv1.DLQ)
// that does not exist yet, with cfg.Partitions partitions and the
// replication of cfg.ReplicationFactor (0: chosen from the number of
// brokers in the cluster's metadata, see AutoReplicationFactor), and waits
// (at most cfg.AdminTimeout, or until ctx ends) until the brokers' metadata
// shows every one with a leader for each partition. Topics that exist are
// left as they are, whatever their partition and replica counts; with
// cfg.Logger set it logs what they have, and warns of those with fewer
// replicas than new topics get. It is idempotent and safe to run from
// several processes at once.
func EnsureTopics(ctx context.Context, cfg Config, topics ...string) error {
	cfg, err := cfg.resolve("ensure topics")
	if err != nil {
		return err
	}
	names := wireNames(cfg, topics)
	if len(names) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.AdminTimeout)
	defer cancel()
	client, done := adminClient(cfg)
	defer done()
	if err := createMissing(ctx, client, cfg, names); err != nil {
		return err
	}
	return waitTopics(ctx, client, names)
}

// createMissing creates the topics metadata does not show yet, retrying
// transient errors until ctx ends: processes racing to create the same
// topics get "broker not available" from kfake while the first creation is
// still settling. The replication is chosen from the brokers the same
// metadata lists, and the topics that exist already are logged once.
func createMissing(ctx context.Context, client *kafka.Client, cfg Config, names []string) error {
	tick := time.NewTicker(topicPoll)
	defer tick.Stop()
	logged := false
	for {
		meta, missing, err := topicState(ctx, client, names)
		if err == nil {
			r := replicationFor(cfg.ReplicationFactor, len(meta.Brokers))
			if !logged {
				cfg.logExisting(meta, names, r)
				logged = true
			}
			if len(missing) == 0 {
				return nil
			}
			if err = createTopics(ctx, client, cfg, r, missing); err == nil {
				cfg.logCreated(missing, r, len(meta.Brokers))
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ensure topics %v: %w (last error: %v)", names, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// logCreated logs the topics EnsureTopics created and their replication.
func (c Config) logCreated(names []string, r replication, brokers int) {
	if c.Logger != nil {
		c.Logger.Info("topics created", logkey.Topics, strings.Join(names, ", "), logkey.Partitions, c.Partitions,
			logkey.Replicas, r.factor, logkey.MinInsync, r.minInsync, logkey.Brokers, brokers)
	}
}

// requireTopics reports an error unless every wire topic in names exists
// with a leader for each partition, asking within cfg.AdminTimeout.
// Transport errors (a loaded broker timing out a read) are retried; a
// missing topic is reported at once.
func requireTopics(ctx context.Context, cfg Config, names []string) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.AdminTimeout)
	defer cancel()
	client, done := adminClient(cfg)
	defer done()
	tick := time.NewTicker(topicPoll)
	defer tick.Stop()
	for {
		missing, err := unreadyTopics(ctx, client, names)
		if err == nil && len(missing) > 0 {
			return fmt.Errorf("topics %v do not exist (run EnsureTopics first)", missing)
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("check topics %v: %w", names, err)
		case <-tick.C:
		}
	}
}

// adminMetadataTTL is how often the admin client's transport refreshes its
// cluster metadata — and how long kafka-go lets each refresh take, which is
// why it is not topicPoll: at 50 ms a broker whose answers took longer (far
// away, or loaded) never gave the transport its metadata, and every admin
// request, NewConsumer's topic check included, failed after AdminTimeout.
// The readiness checks do not wait on this cache: each asks the brokers
// itself, every topicPoll.
const adminMetadataTTL = 2 * time.Second

// adminClient returns a client on its own transport and a func that closes
// its connections. A fresh transport also avoids kafka.DefaultTransport's
// pooled connections, which fail once with "unexpected EOF" after a broker
// restart.
func adminClient(cfg Config) (*kafka.Client, func()) {
	tr := &kafka.Transport{ClientID: cfg.ClientID, MetadataTTL: adminMetadataTTL, TLS: cfg.TLS, SASL: cfg.SASL, Dial: cfg.Dial}
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: cfg.AdminTimeout, Transport: tr}
	return client, tr.CloseIdleConnections
}

// wireNames returns the prefixed names of topics and their DLQs, deduplicated.
func wireNames(cfg Config, topics []string) []string {
	seen := make(map[string]bool, 2*len(topics))
	var names []string
	for _, t := range topics {
		for _, n := range []string{cfg.topic(t), cfg.topic(eventsv1.DLQ(t))} {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}

// createTopics sends one CreateTopics request creating names under r;
// TopicAlreadyExists is success.
func createTopics(ctx context.Context, client *kafka.Client, cfg Config, r replication, names []string) error {
	req := &kafka.CreateTopicsRequest{Topics: make([]kafka.TopicConfig, len(names))}
	for i, n := range names {
		req.Topics[i] = r.topicConfig(n, cfg.Partitions)
	}
	resp, err := client.CreateTopics(ctx, req)
	if err != nil {
		return fmt.Errorf("create topics %v: %w", names, err)
	}
	var errs []error
	for _, n := range names {
		if err := resp.Errors[n]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			errs = append(errs, fmt.Errorf("create topic %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// waitTopics polls metadata until every name is ready or ctx ends.
func waitTopics(ctx context.Context, client *kafka.Client, names []string) error {
	tick := time.NewTicker(topicPoll)
	defer tick.Stop()
	for {
		missing, err := unreadyTopics(ctx, client, names)
		if err == nil && len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for topics %v (last error: %v): %w", missing, err, ctx.Err())
		case <-tick.C:
		}
	}
}

// unreadyTopics returns the names whose metadata is missing, in error, or
// has a partition without a leader.
func unreadyTopics(ctx context.Context, client *kafka.Client, names []string) ([]string, error) {
	_, missing, err := topicState(ctx, client, names)
	return missing, err
}

// topicState returns the metadata of names (and of every broker) and the
// names whose metadata is missing, in error, or has a partition without a
// leader.
func topicState(ctx context.Context, client *kafka.Client, names []string) (*kafka.MetadataResponse, []string, error) {
	resp, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: names})
	if err != nil {
		return nil, names, err
	}
	ready := make(map[string]bool, len(resp.Topics))
	for _, t := range resp.Topics {
		ready[t.Name] = t.Error == nil && len(t.Partitions) > 0 && leadersKnown(t.Partitions)
	}
	var missing []string
	for _, n := range names {
		if !ready[n] {
			missing = append(missing, n)
		}
	}
	return resp, missing, nil
}

// leadersKnown reports whether every partition has a reachable leader.
func leadersKnown(ps []kafka.Partition) bool {
	for _, p := range ps {
		if p.Leader.Host == "" {
			return false
		}
	}
	return true
}
