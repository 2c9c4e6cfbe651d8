package testinfra

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/devinfra/redisproc"
)

// Bounds on redis-server in tests.
const (
	readyTimeout = 10 * time.Second      // until PING answers after a start
	stopTimeout  = 5 * time.Second       // after SIGTERM before SIGKILL
	pollInterval = 20 * time.Millisecond // between readiness probes
)

// start launches redis-server on r.Addr in r.Dir and waits until ready.
func (r *Redis) start() error {
	p, err := redisproc.Start(context.Background(), redisproc.Options{
		Bin: r.bin, Addr: r.Addr, Dir: r.Dir, ReadyTimeout: readyTimeout, SysProcAttr: redisAttrs(),
	})
	if err != nil {
		return err
	}
	r.proc = p
	return nil
}
