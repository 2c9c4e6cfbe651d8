package devstack

import (
	"context"
	"testing"

	"github.com/braidhq/braid/pkg/handler"
	"github.com/stretchr/testify/require"
)

// fakeRedis is a redisBackend that only has an address.
type fakeRedis struct{ addr string }

func (f fakeRedis) Addr() string                 { return f.addr }
func (fakeRedis) Durable() bool                  { return true }
func (fakeRedis) Exited() <-chan struct{}        { return nil }
func (fakeRedis) Stop(ctx context.Context) error { return nil }

func TestEgress(t *testing.T) {
	t.Parallel()
	inf := &infra{kafkaAddr: "127.0.0.1:19092", redis: fakeRedis{"127.0.0.1:16379"}}
	own := []handler.Listener{{Name: "api", Addr: "127.0.0.1:8080"}, {Name: "kafka", Addr: "127.0.0.1:19092"},
		{Name: "redis", Addr: "127.0.0.1:16379"}}

	def := Config{APIAddr: "127.0.0.1:8080"}
	e := egress(def, inf)
	require.True(t, e.AllowLoopback, "braid dev opens loopback by default")
	require.Equal(t, own, e.Own, "but never the stack's own ports")
	require.Zero(t, e.Allow.Len())
	require.NoError(t, handler.Config{Egress: e}.Validate())
	require.Contains(t, egressLine(def), "loopback (not this stack's own ports); --allow-loopback=false refuses loopback")

	strict := Config{APIAddr: "127.0.0.1:8080", RefuseLoopback: true, HTTPAllow: handler.MustParseAllowList("10.0.0.0/8,*.lan")}
	e = egress(strict, inf)
	require.False(t, e.AllowLoopback)
	require.Equal(t, own, e.Own)
	require.Equal(t, "10.0.0.0/8,*.lan", e.Allow.String())
	require.Equal(t, "http/llm nodes may call public addresses only, as braid-worker (--allow-loopback=false); "+
		"BRAID_HTTP_ALLOW also opens 10.0.0.0/8,*.lan", egressLine(strict))
}
