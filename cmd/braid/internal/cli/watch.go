package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/braidhq/braid/cmd/braid/internal/client"
)

// Watch timing.
const (
	pollInterval   = 500 * time.Millisecond // refresh period when live events are unavailable
	safetyInterval = 2 * time.Second        // refresh period while live events flow, in case one is missed
	maxGetFailures = 20                     // consecutive failed refreshes before giving up (~10s)
)

// watcher follows a run until it ends: it re-reads the run on every live
// event from GET /runs/{id}/events and redraws, falling back to polling
// GET /runs/{id} every pollInterval when the event stream fails.
type watcher struct {
	c    *client.Client
	id   string
	draw func(client.Run)
	warn func(error)
	poll time.Duration
	idle time.Duration
}

// run blocks until the run is terminal (returning it) or ctx ends.
func (w *watcher) run(ctx context.Context) (client.Run, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kicks := make(chan struct{}, 1)
	sseDone := make(chan error, 1)
	go func() {
		sseDone <- w.c.RunEvents(sctx, w.id, func(client.Event) error {
			select {
			case kicks <- struct{}{}:
			default:
			}
			return nil
		})
	}()
	wait := time.NewTimer(0)
	defer wait.Stop()
	interval, failures := w.idle, 0
	var last client.Run
	for {
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-kicks:
		case err := <-sseDone:
			sseDone, interval = nil, w.poll
			if err != nil && ctx.Err() == nil {
				w.warn(fmt.Errorf("live events unavailable (%v); polling every %s", err, w.poll))
			}
		case <-wait.C:
		}
		run, _, err := w.c.GetRun(ctx, w.id)
		switch {
		case err == nil:
			failures, last = 0, run
			w.draw(run)
			if terminalRun(run.Status) {
				return run, nil
			}
		case fatal(err) || failures+1 >= maxGetFailures:
			return last, err
		default:
			failures++
		}
		wait.Reset(interval)
	}
}

// fatal reports errors that retrying cannot fix: a 4xx answer, or ctx ending.
func fatal(err error) bool {
	var p *client.Problem
	if errors.As(err, &p) {
		return p.Status >= 400 && p.Status < 500 && p.Status != http.StatusTooManyRequests
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
