package devstack

import (
	"context"
	"fmt"
	"time"
)

// exit reports that a service's Run returned.
type exit struct {
	name string
	err  error
}

// service is one component running in its own goroutine with its own
// context, so that shutdown can stop components one by one.
type service struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// launch runs fn in a goroutine under a child context of parent and
// reports its return on exits (which must have room for every service).
func launch(parent context.Context, name string, exits chan<- exit, fn func(context.Context) error) *service {
	ctx, cancel := context.WithCancel(parent)
	s := &service{name: name, cancel: cancel, done: make(chan struct{})}
	go func() {
		s.err = fn(ctx)
		close(s.done)
		exits <- exit{name: name, err: s.err}
	}()
	return s
}

// stop cancels the service and waits for it at most timeout. Stopping a
// service that already returned gives its error again.
func (s *service) stop(timeout time.Duration) error {
	s.cancel()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.done:
		if s.err != nil {
			return fmt.Errorf("%s: %w", s.name, s.err)
		}
		return nil
	case <-t.C:
		return fmt.Errorf("%s did not stop within %s", s.name, timeout)
	}
}

// stopAll stops services concurrently and joins their errors.
func stopAll(svcs []*service, timeout time.Duration) []error {
	errs := make(chan error, len(svcs))
	for _, s := range svcs {
		go func() { errs <- s.stop(timeout) }()
	}
	var out []error
	for range svcs {
		if err := <-errs; err != nil {
			out = append(out, err)
		}
	}
	return out
}
