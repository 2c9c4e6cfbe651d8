package devstack

import (
	"context"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// fastForwardEvery is how often the embedded Redis's clock is advanced, so
// that keys with a TTL (claims, heartbeats, locks) expire.
const fastForwardEvery = 100 * time.Millisecond

// embeddedRedis is the in-memory fallback used when redis-server is not
// installed. Its state does not survive a restart.
type embeddedRedis struct {
	m      *miniredis.Miniredis
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

// startEmbeddedRedis starts miniredis on addr with a ticker that advances
// its TTL clock in real time.
func startEmbeddedRedis(addr, password string) (*embeddedRedis, error) {
	m := miniredis.NewMiniRedis()
	m.RequireAuth(password)
	if err := m.StartAddr(addr); err != nil {
		return nil, listenError("--redis-addr", addr, err)
	}
	e := &embeddedRedis{m: m, stop: make(chan struct{}), done: make(chan struct{})}
	go e.tick()
	return e, nil
}

// tick advances miniredis's clock by the real time elapsed (miniredis only
// expires keys when told time passed).
func (e *embeddedRedis) tick() {
	t := time.NewTicker(fastForwardEvery)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-e.stop:
			return
		case now := <-t.C:
			e.m.FastForward(now.Sub(last))
			last = now
		}
	}
}

func (e *embeddedRedis) Addr() string            { return e.m.Addr() }
func (e *embeddedRedis) Durable() bool           { return false }
func (e *embeddedRedis) Exited() <-chan struct{} { return e.done }

// Stop closes the server; it never blocks for long.
func (e *embeddedRedis) Stop(context.Context) error {
	e.closed.Do(func() {
		close(e.stop)
		e.m.Close()
	})
	return nil
}
