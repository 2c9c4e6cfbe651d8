package eventbus

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// Broker settings that bound a consumer group member's session timeout. A
// JoinGroup asking for a session outside [min, max] is refused with
// INVALID_SESSION_TIMEOUT, and kafka-go only logs that and retries for ever.
const (
	brokerMinSession = "group.min.session.timeout.ms"
	brokerMaxSession = "group.max.session.timeout.ms"
)

// sessionBounds is the range of session timeouts every broker accepts;
// a zero bound is unknown.
type sessionBounds struct {
	min, max time.Duration
}

// fitSession returns cfg with SessionTimeout moved into the range the
// brokers accept, and a note saying what changed ("" when nothing did).
// Braid's default session (3 s) is below stock Kafka's minimum (6 s), so
// against such a broker the consumer falls back to the minimum instead of
// never joining; brokers started by Braid (kfake in dev and tests) allow it.
// When the brokers cannot be asked, cfg is returned unchanged: a refused
// join is then logged by kafka-go at Warn.
func fitSession(ctx context.Context, cfg Config) (Config, string) {
	b, err := brokerSessionBounds(ctx, cfg)
	if err != nil {
		return cfg, ""
	}
	want := cfg.SessionTimeout
	got := b.fit(want)
	if got == want {
		return cfg, ""
	}
	cfg.SessionTimeout = got
	if cfg.HeartbeatInterval >= got {
		cfg.HeartbeatInterval = got / 3
	}
	return cfg, fmt.Sprintf("session timeout %s is outside the brokers' %s..%s (%s, %s); using %s",
		want, b.min, b.max, brokerMinSession, brokerMaxSession, got)
}

// fit returns d clamped into b's known bounds.
func (b sessionBounds) fit(d time.Duration) time.Duration {
	if b.min > 0 && d < b.min {
		d = b.min
	}
	if b.max > 0 && d > b.max {
		d = b.max
	}
	return d
}

// brokerSessionBounds asks every broker in the cluster's metadata for its
// session bounds and returns the range all of them accept.
func brokerSessionBounds(ctx context.Context, cfg Config) (sessionBounds, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.AdminTimeout)
	defer cancel()
	client, done := adminClient(cfg)
	defer done()
	meta, err := client.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return sessionBounds{}, fmt.Errorf("session bounds: metadata: %w", err)
	}
	req := &kafka.DescribeConfigsRequest{}
	for _, br := range meta.Brokers {
		req.Resources = append(req.Resources, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeBroker, ResourceName: strconv.Itoa(br.ID),
			ConfigNames: []string{brokerMinSession, brokerMaxSession},
		})
	}
	resp, err := client.DescribeConfigs(ctx, req)
	if err != nil {
		return sessionBounds{}, fmt.Errorf("session bounds: describe broker configs: %w", err)
	}
	return boundsOf(resp.Resources), nil
}

// boundsOf folds the brokers' answers into the range all of them accept:
// the largest minimum and the smallest maximum. Unparseable or missing
// entries leave a bound unknown.
func boundsOf(resources []kafka.DescribeConfigResponseResource) sessionBounds {
	var b sessionBounds
	for _, r := range resources {
		if r.Error != nil {
			continue
		}
		for _, e := range r.ConfigEntries {
			ms, err := strconv.Atoi(e.ConfigValue)
			if err != nil || ms <= 0 {
				continue
			}
			d := time.Duration(ms) * time.Millisecond
			switch e.ConfigName {
			case brokerMinSession:
				b.min = max(b.min, d)
			case brokerMaxSession:
				if b.max == 0 || d < b.max {
					b.max = d
				}
			}
		}
	}
	return b
}
