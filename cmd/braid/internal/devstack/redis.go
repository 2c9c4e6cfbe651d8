package devstack

import (
	"context"
	"path/filepath"

	"github.com/braidhq/braid/pkg/devinfra/redisproc"
)

// redisBackend is the Redis the stack uses: a redis-server process or the
// embedded fallback.
type redisBackend interface {
	// Addr is host:port.
	Addr() string
	// Durable reports whether state survives a restart.
	Durable() bool
	// Exited is closed when the backend stopped on its own.
	Exited() <-chan struct{}
	// Stop shuts the backend down, waiting at most until ctx ends.
	Stop(ctx context.Context) error
}

// redisServer is a redis-server child process with AOF on.
type redisServer struct{ *redisproc.Server }

// startRedisServer spawns bin listening on addr with its data under
// dataDir/redis, and waits until it answers PING.
func startRedisServer(ctx context.Context, bin, dataDir, addr, password string) (*redisServer, error) {
	s, err := redisproc.Start(ctx, redisproc.Options{
		Bin: bin, Addr: addr, Dir: filepath.Join(dataDir, "redis"), SysProcAttr: childAttrs(), Password: password,
	})
	if err != nil {
		return nil, err
	}
	return &redisServer{s}, nil
}

// Durable reports true: state survives a restart (AOF).
func (r *redisServer) Durable() bool { return true }

// Exited is closed when the server exited.
func (r *redisServer) Exited() <-chan struct{} { return r.Done() }
