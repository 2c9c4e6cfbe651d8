package devstack

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// readyPoll is the interval between /readyz probes.
const readyPoll = 100 * time.Millisecond

// waitReady polls url until it answers 200, ctx ends, timeout passes or a
// service exits.
func waitReady(ctx context.Context, url string, timeout time.Duration, exits <-chan exit) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hc := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for {
		if probe(ctx, hc, url) {
			return nil
		}
		select {
		case e := <-exits:
			return fmt.Errorf("%s stopped while starting: %v", e.name, e.err)
		case <-ctx.Done():
			return fmt.Errorf("api not ready at %s within %s", url, timeout)
		case <-tick.C:
		}
	}
}

// probe reports whether url answers 200.
func probe(ctx context.Context, hc *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
