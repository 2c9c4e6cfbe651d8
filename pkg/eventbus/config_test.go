package eventbus

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	got, err := Config{Brokers: []string{"b:9092"}}.resolve("test")
	require.NoError(t, err)
	require.Equal(t, Config{
		Brokers: []string{"b:9092"}, ClientID: "braid", Partitions: 6,
		SessionTimeout: 3 * time.Second, HeartbeatInterval: 500 * time.Millisecond,
		RebalanceTimeout: 5 * time.Second, JoinGroupBackoff: 250 * time.Millisecond, MaxWait: 250 * time.Millisecond,
		AdminTimeout: 10 * time.Second, PublishTimeout: 30 * time.Second, FetchBuffer: 64, PrefetchBytes: 16 << 20,
	}, got)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := Config{Brokers: []string{"b:9092"}}
	tests := []struct {
		name    string
		input   func(c Config) Config
		wantErr string
	}{
		{"valid", func(c Config) Config { return c }, ""},
		{"no brokers", func(c Config) Config { c.Brokers = nil; return c }, "no brokers"},
		{"empty broker", func(c Config) Config { c.Brokers = []string{""}; return c }, "broker 0 is empty"},
		{"negative partitions", func(c Config) Config { c.Partitions = -1; return c }, "partitions -1 is negative"},
		{"negative max wait", func(c Config) Config { c.MaxWait = -time.Second; return c }, "max wait -1s is negative"},
		{"negative prefetch bytes", func(c Config) Config { c.PrefetchBytes = -1; return c }, "prefetch bytes -1 is negative"},
		{"heartbeat too slow", func(c Config) Config { c.HeartbeatInterval = 3 * time.Second; return c }, "heartbeat interval 3s not below session timeout 3s"},
		{"bad prefix", func(c Config) Config { c.TopicPrefix = "a/b"; return c }, `topic prefix "a/b"`},
		{"good prefix", func(c Config) Config { c.TopicPrefix = "t-1.x_"; return c }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.input(ok).resolve("op")
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, "op: invalid eventbus config")
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestConstructorsValidate(t *testing.T) {
	t.Parallel()
	_, err := NewProducer(Config{})
	require.ErrorContains(t, err, "new producer: invalid eventbus config: no brokers")
	_, err = NewConsumer(t.Context(), Config{}, "g", "t")
	require.ErrorContains(t, err, "no brokers")
	_, err = NewConsumer(t.Context(), Config{Brokers: []string{"b:1"}}, "", "t")
	require.ErrorContains(t, err, "group and topics are required")
	_, err = NewConsumer(t.Context(), Config{Brokers: []string{"b:1"}}, "g")
	require.ErrorContains(t, err, "group and topics are required")
	require.ErrorContains(t, EnsureTopics(t.Context(), Config{}, "t"), "ensure topics: invalid")
}

func TestWireNames(t *testing.T) {
	t.Parallel()
	cfg := Config{TopicPrefix: "p."}
	require.Equal(t, []string{"p.a", "p.a.dlq", "p.b", "p.b.dlq", "p.a.dlq.dlq"},
		wireNames(cfg, []string{"a", "b", "a", "a.dlq"}))
	require.Empty(t, wireNames(cfg, nil))
}
