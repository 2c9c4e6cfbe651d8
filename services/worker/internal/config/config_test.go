package config

import (
	"log/slog"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/handler"
	"github.com/stretchr/testify/require"
)

// Not parallel: t.Setenv changes the process environment.
func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    func(t *testing.T, c Config)
		wantErr string
	}{
		{
			name: "defaults",
			want: func(t *testing.T, c Config) {
				require.Equal(t, []string{"127.0.0.1:19092"}, c.KafkaBrokers)
				require.Equal(t, "redis://127.0.0.1:16379/0", c.RedisURL)
				require.Equal(t, 4, c.Concurrency)
				require.Equal(t, 20*time.Second, c.DrainTimeout)
				require.Equal(t, 5*time.Second, c.Service(nil, nil).HeartbeatInterval)
				require.Equal(t, slog.LevelInfo, c.LogLevel)
				e := c.Service(nil, nil).Handler.Egress
				require.Zero(t, e.Allow.Len(), "only public addresses by default")
				require.False(t, e.AllowLoopback, "braid-worker is strict")
				require.Equal(t, []handler.Listener{{Name: "redis", Addr: "127.0.0.1:16379"}, {Name: "kafka", Addr: "127.0.0.1:19092"}}, e.Own)
			},
		},
		{
			name: "set",
			env: map[string]string{
				"BRAID_KAFKA_BROKERS": "k1:9092, k2:9092,", "BRAID_WORKER_CONCURRENCY": "16",
				"BRAID_WORKER_ID": "w1", "BRAID_REDIS_NAMESPACE": "ns:", "BRAID_LOG_LEVEL": "debug",
				"BRAID_LLM_BASE_URL": "http://llm.local/v1", "BRAID_LLM_API_KEY": "secret",
				"BRAID_WORKER_HEARTBEAT_INTERVAL": "700ms", "BRAID_REDIS_URL": "rediss://u:p@redis.internal/2",
				"BRAID_HTTP_ALLOW": " *.svc.internal, 10.2.0.0/16,llm.internal:8443 ,", "BRAID_WORKER_HTTP_ADDR": ":9000",
			},
			want: func(t *testing.T, c Config) {
				require.Equal(t, []string{"k1:9092", "k2:9092"}, c.KafkaBrokers)
				s := c.Service(nil, nil)
				require.Equal(t, 16, s.Concurrency)
				require.Equal(t, 700*time.Millisecond, s.HeartbeatInterval)
				require.Equal(t, "w1", s.ID)
				require.Equal(t, "ns:", s.Keys.Namespace)
				require.Equal(t, "secret", s.Handler.LLMAPIKey)
				require.Equal(t, "http://llm.local/v1", s.Handler.LLMBaseURL)
				require.Equal(t, slog.LevelDebug, c.LogLevel)
				e := s.Handler.Egress
				require.Equal(t, "*.svc.internal,10.2.0.0/16,llm.internal:8443", e.Allow.String())
				require.Equal(t, []handler.Listener{{Name: "worker health", Addr: ":9000"}, {Name: "redis", Addr: "redis.internal:6379"},
					{Name: "kafka", Addr: "k1:9092"}, {Name: "kafka", Addr: "k2:9092"}}, e.Own)
				require.NoError(t, s.Handler.Validate())
			},
		},
		{
			name: "task environment, handlers and secrets",
			env: map[string]string{
				"BRAID_WORKER_PASS_ENV": "AWS_REGION, HTTPS_PROXY", "BRAID_WORKER_HANDLERS": "noop,http",
				"BRAID_SECRET_API_TOKEN": " tok en ", "BRAID_WORKER_SECRETS_DIR": "/run/secrets/braid",
			},
			want: func(t *testing.T, c Config) {
				s := c.Service(nil, nil)
				require.Equal(t, []string{"AWS_REGION", "HTTPS_PROXY"}, s.Handler.PassEnv)
				require.Equal(t, []string{"noop", "http"}, s.Handlers)
				v, ok := s.Secrets.Secret("API_TOKEN")
				require.True(t, ok)
				require.Equal(t, " tok en ", v, "secret values are taken as they are")
				_, ok = s.Secrets.Secret("OTHER")
				require.False(t, ok)
			},
		},
		{
			name: "no secrets configured",
			want: func(t *testing.T, c Config) { require.Nil(t, c.Service(nil, nil).Secrets) },
		},
		{
			name: "malformed values are all reported",
			env: map[string]string{"BRAID_WORKER_CONCURRENCY": "-2", "BRAID_LOG_LEVEL": "loud", "BRAID_WORKER_DRAIN_TIMEOUT": "soon",
				"BRAID_HTTP_ALLOW": "10.0.0.0/33,ok.internal,*"},
			wantErr: "BRAID_WORKER_CONCURRENCY",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"BRAID_KAFKA_BROKERS", "BRAID_WORKER_CONCURRENCY", "BRAID_WORKER_ID", "BRAID_REDIS_NAMESPACE",
				"BRAID_LOG_LEVEL", "BRAID_LLM_BASE_URL", "BRAID_LLM_API_KEY", "BRAID_WORKER_DRAIN_TIMEOUT", "BRAID_REDIS_URL",
				"BRAID_WORKER_HEARTBEAT_INTERVAL", "BRAID_WORKER_PASS_ENV", "BRAID_WORKER_HANDLERS", "BRAID_SECRET_API_TOKEN",
				"BRAID_WORKER_SECRETS_DIR", "BRAID_HTTP_ALLOW", "BRAID_WORKER_HTTP_ADDR", "BRAID_PPROF_ADDR"} {
				t.Setenv(k, tt.env[k])
			}
			c, err := Load()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.ErrorContains(t, err, "BRAID_LOG_LEVEL")
				require.ErrorContains(t, err, "BRAID_WORKER_DRAIN_TIMEOUT")
				require.ErrorContains(t, err, `BRAID_HTTP_ALLOW="10.0.0.0/33,ok.internal,*": entry "10.0.0.0/33": not a CIDR range`)
				require.ErrorContains(t, err, `entry "*": "*" alone is not allowed`)
				return
			}
			require.NoError(t, err)
			tt.want(t, c)
		})
	}
}
