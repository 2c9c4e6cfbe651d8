package apisvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/syncbuf"
	"github.com/stretchr/testify/require"
)

// TestEndingsRecheck: a re-check pass asks about every waited-for run once
// (however many requests wait for it) in chunks of recheckChunk, announces
// the runs that ended or are gone to all their waiters and no other, and
// logs a failing pass once until one succeeds.
func TestEndingsRecheck(t *testing.T) {
	t.Parallel()
	e := newEndings(10000, time.Minute)
	status := map[string]string{"done": "succeeded", "failed": "failed", "gone": "", "busy": "running"}
	var waiters []*waiter
	for i := range 2500 {
		run := fmt.Sprintf("r%04d", i)
		if i < len(status) {
			run = []string{"done", "failed", "gone", "busy"}[i]
		} else {
			status[run] = "pending"
		}
		w, ok := e.add(run)
		require.True(t, ok)
		waiters = append(waiters, w)
	}
	for range 3 { // three more requests wait for "done", two for "busy"
		w, _ := e.add("done")
		waiters = append(waiters, w)
	}
	for range 2 {
		w, _ := e.add("busy")
		waiters = append(waiters, w)
	}

	var mu sync.Mutex
	var chunks []int
	asked := map[string]int{}
	var firstPass map[string]int // asked as the first pass ended: the next starts 5 ms later, maybe before the test looks
	fail := false
	passes := make(chan struct{}, 100)
	statuses := func(_ context.Context, runs []string) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		chunks = append(chunks, len(runs))
		if fail {
			return nil, errors.New("redis down")
		}
		out := make([]string, len(runs))
		for i, r := range runs {
			asked[r]++
			out[i] = status[r]
		}
		if len(chunks) == 3 {
			firstPass = maps.Clone(asked)
		}
		if len(chunks)%3 == 0 {
			passes <- struct{}{}
		}
		return out, nil
	}
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); e.recheck(ctx, 5*time.Millisecond, statuses, log) }()
	defer func() { cancel(); <-done }()

	select {
	case <-passes:
	case <-time.After(10 * time.Second):
		t.Fatal("no re-check pass in 10 s")
	}
	mu.Lock()
	require.Equal(t, []int{1000, 1000, 500}, chunks[:3], "2,500 runs waited for by 2,505 requests: three round trips")
	for run := range status {
		require.Equal(t, 1, firstPass[run], "run %s asked about once in the pass", run)
	}
	fail = true
	mu.Unlock()
	for _, w := range waiters {
		switch w.run {
		case "done", "failed", "gone":
			require.Len(t, w.ended, 1, "waiter of %s woken", w.run)
			require.Nil(t, w.stored.Load(), "a re-check carries no run")
		default:
			require.Empty(t, w.ended, "waiter of %s not woken", w.run)
		}
	}

	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "re-check of waited-for runs failed")
	}, 10*time.Second, 5*time.Millisecond)
	mu.Lock()
	failedFrom := len(chunks)
	mu.Unlock()
	require.Eventually(t, func() bool { // several more failing passes
		mu.Lock()
		defer mu.Unlock()
		if len(chunks) < failedFrom+5 {
			return false
		}
		fail = false
		return true
	}, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "re-check of waited-for runs works again")
	}, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, 1, strings.Count(logs.String(), "failed"), "a failing streak is logged once:\n%s", logs.String())
}
