package apisvc_test

import (
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heapAfterGC is the heap in use once garbage is collected.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC() // the second collects what the first's finalizers freed
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestBadInputMemoryBounded sends the whole bad-input suite (with its
// 3 MiB bodies and 40,000-name inputs) round after round: no answer is a
// 5xx, and neither the heap nor the goroutines grow with the rounds, so
// nothing a malformed request allocates is kept.
//
// Not parallel: it measures the process, which parallel tests would
// disturb (sequential tests run before any parallel one resumes).
func TestBadInputMemoryBounded(t *testing.T) {
	e := setup(t, envOpts{})
	run, sched := setupBadInput(e)
	cases := allBadCases(run, sched)
	round := func() {
		for _, tc := range cases {
			resp := e.client.do(t, tc.r, false)
			require.Less(t, resp.Status, 500, "%s: %s", tc.name, truncate(resp.Body))
			require.Equal(t, tc.status, resp.Status, "%s: %s", tc.name, truncate(resp.Body))
		}
	}
	round() // warm up: connections, pools, caches
	heap, routines := heapAfterGC(), runtime.NumGoroutine()
	const rounds = 5
	for range rounds {
		round()
	}
	grown := int64(heapAfterGC()) - int64(heap)
	t.Logf("%d requests: heap in use %d KiB before, grew %d KiB", rounds*len(cases), heap>>10, grown>>10)
	// The test's own log buffer grows by about 0.5 KiB a request; a leak of
	// one 3 MiB body per round would pass 8 MiB.
	require.Less(t, grown, int64(8<<20), "the heap grows with malformed requests")
	if !assert.Eventually(t, func() bool { return runtime.NumGoroutine() <= routines+5 }, 10*time.Second, 20*time.Millisecond) {
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Fatalf("goroutines grow with malformed requests: %d, were %d; now:\n%s", runtime.NumGoroutine(), routines, b.String())
	}
}
