package autoprocs

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeciderMovesAfterWindowsInARow(t *testing.T) {
	t.Parallel()
	queueing := Window{Events: 1000, Late: 100} // 10 % late
	light := Window{Events: 1000, Late: 2}      // 0.2 %
	between := Window{Events: 1000, Late: 20}   // 2 %: neither
	idle := Window{Events: 40, Late: 40}        // too few to say anything

	var d Decider
	require.Equal(t, 1, d.Next(1, 1, 2, queueing), "one queueing window is not enough")
	require.Equal(t, 2, d.Next(1, 1, 2, queueing), "the second in a row moves to the ceiling")
	require.Equal(t, 2, d.Next(2, 1, 2, queueing), "at the ceiling it stays")
	for i := range DownWindows - 1 {
		require.Equal(t, 2, d.Next(2, 1, 2, light), "light window %d of %d", i+1, DownWindows)
	}
	require.Equal(t, 1, d.Next(2, 1, 2, light), "the fourth light window in a row moves to the floor")

	d = Decider{}
	require.Equal(t, 1, d.Next(1, 1, 2, queueing))
	require.Equal(t, 1, d.Next(1, 1, 2, between), "a window in between breaks the run of queueing ones")
	require.Equal(t, 1, d.Next(1, 1, 2, queueing))
	require.Equal(t, 2, d.Next(1, 1, 2, queueing))
	for range DownWindows - 1 {
		require.Equal(t, 2, d.Next(2, 1, 2, light))
	}
	require.Equal(t, 2, d.Next(2, 1, 2, between), "a window in between breaks the run of light ones")
	for range DownWindows - 1 {
		require.Equal(t, 2, d.Next(2, 1, 2, idle), "an idle window counts as light")
	}
	require.Equal(t, 1, d.Next(2, 1, 2, idle))
	require.Equal(t, 1, d.Next(1, 1, 2, light), "at the floor it stays")

	d = Decider{}
	d.Next(4, 4, 8, queueing)
	require.Equal(t, 8, d.Next(4, 4, 8, queueing), "floor and ceiling as given")
}

func TestWindowOf(t *testing.T) {
	t.Parallel()
	// Buckets start at -Inf, 0, 100 µs, 1 ms and 10 ms.
	buckets := []float64{-1, 0, 100e-6, 1e-3, 10e-3, 1}
	require.Equal(t, Window{}, windowOf(buckets, []uint64{0, 5, 5, 5, 5}, nil), "the first read sets the baseline")
	w := windowOf(buckets, []uint64{0, 15, 25, 8, 4}, []uint64{0, 5, 5, 5, 2})
	require.Equal(t, Window{Events: 10 + 20 + 3 + 2, Late: 3 + 2}, w)
	require.Zero(t, w.Share(), "35 wake-ups are too few to say anything")
	w = Window{Events: 200, Late: 10}
	require.InDelta(t, 0.05, w.Share(), 1e-9)
}

// TestRunFollowsTheLoad runs the controller on this test binary's own
// scheduler: goroutines that queue for one P move it to two, and when they
// stop it goes back to one.
func TestRunFollowsTheLoad(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Config{Min: 1, Max: 2})
	}()
	t.Cleanup(func() { cancel(); <-done })

	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			for !stop.Load() {
				spin(100 * time.Microsecond)
				runtime.Gosched() // back in the run queue, behind the others
			}
		})
	}
	moved := assert.Eventually(t, func() bool { return runtime.GOMAXPROCS(0) == 2 }, 10*time.Second, 10*time.Millisecond,
		"40 goroutines queueing for one P did not move GOMAXPROCS to 2")
	stop.Store(true)
	wg.Wait()
	require.True(t, moved)

	require.Eventually(t, func() bool { return runtime.GOMAXPROCS(0) == 1 }, 10*time.Second, 10*time.Millisecond,
		"an idle process stayed at GOMAXPROCS 2")
	cancel()
	<-done
	require.Equal(t, 1, runtime.GOMAXPROCS(0), "Run leaves the floor set")
}

func TestRunWithoutRoomSetsNothing(t *testing.T) {
	prev := runtime.GOMAXPROCS(3)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	Run(context.Background(), Config{Min: 2, Max: 2})
	Run(context.Background(), Config{Min: 0, Max: 4})
	require.Equal(t, 3, runtime.GOMAXPROCS(0))
}

// spin keeps the P busy for d.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}
