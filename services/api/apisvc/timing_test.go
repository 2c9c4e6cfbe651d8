package apisvc

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// msp is a figure in milliseconds; nil is "absent".
func msp(v int64) *int64 { return &v }

func TestAttemptTiming(t *testing.T) {
	t.Parallel()
	const now = int64(1_000_000)
	failed := func(attempt int, q, s, e int64) records.PastAttempt {
		return records.PastAttempt{Attempt: attempt, Outcome: records.OutcomeFailed, QueuedAt: q, StartedAt: s, EndedAt: e}
	}
	tests := []struct {
		name     string
		rec      records.NodeRecord
		builtin  bool
		wantWait *int64
		wantRun  *int64
	}{
		{name: "pending: nothing queued", rec: records.NodeRecord{State: records.NodePending}},
		{name: "queued: waits until now",
			rec: records.NodeRecord{State: records.NodeQueued, Attempt: 1, QueuedAt: now - 700}, wantWait: msp(700)},
		{name: "running: wait is fixed, run grows",
			rec:      records.NodeRecord{State: records.NodeRunning, Attempt: 1, QueuedAt: now - 700, StartedAt: now - 500},
			wantWait: msp(200), wantRun: msp(500)},
		{name: "succeeded",
			rec:      records.NodeRecord{State: records.NodeSucceeded, Attempt: 1, QueuedAt: now - 700, StartedAt: now - 500, FinishedAt: now - 100},
			wantWait: msp(200), wantRun: msp(400)},
		{name: "worker clock behind: no negative wait",
			rec:      records.NodeRecord{State: records.NodeSucceeded, Attempt: 1, QueuedAt: now - 700, StartedAt: now - 750, FinishedAt: now - 100},
			wantWait: msp(0), wantRun: msp(650)},
		{name: "retry queued: only the current attempt counts",
			rec: records.NodeRecord{State: records.NodeQueued, Attempt: 2, QueuedAt: now - 30,
				Past: []records.PastAttempt{failed(1, now-900, now-800, now-600)}},
			wantWait: msp(30)},
		{name: "retried and succeeded: the second attempt's figures",
			rec: records.NodeRecord{State: records.NodeSucceeded, Attempt: 2, QueuedAt: now - 300, StartedAt: now - 290, FinishedAt: now - 90,
				Past: []records.PastAttempt{failed(1, now-900, now-800, now-600)}},
			wantWait: msp(10), wantRun: msp(200)},
		{name: "retry_wait: the failed attempt stopped running when it failed",
			rec: records.NodeRecord{State: records.NodeRetryWait, Attempt: 1, QueuedAt: now - 900, StartedAt: now - 800, RetryAt: now + 500,
				Past: []records.PastAttempt{failed(1, now-900, now-800, now-600)}},
			wantWait: msp(100), wantRun: msp(200)},
		{name: "cancelled in retry_wait: ended at the failure, not the cancel",
			rec: records.NodeRecord{State: records.NodeCancelled, Attempt: 1, QueuedAt: now - 900, StartedAt: now - 800, FinishedAt: now,
				Past: []records.PastAttempt{failed(1, now-900, now-800, now-600)}},
			wantWait: msp(100), wantRun: msp(200)},
		{name: "timed out in the queue, waiting to retry: waited until the failure",
			rec: records.NodeRecord{State: records.NodeRetryWait, Attempt: 1, QueuedAt: now - 900,
				Past: []records.PastAttempt{failed(1, now-900, 0, now-400)}},
			wantWait: msp(500)},
		{name: "cancelled while queued: waited until the cancel, never ran",
			rec:      records.NodeRecord{State: records.NodeCancelled, Attempt: 1, QueuedAt: now - 900, FinishedAt: now - 100},
			wantWait: msp(800)},
		{name: "re-sent after a loss: measured from the new dispatch",
			rec: records.NodeRecord{State: records.NodeQueued, Attempt: 1, QueuedAt: now - 40, Lost: 1,
				Past: []records.PastAttempt{{Attempt: 1, Outcome: records.OutcomeLost, QueuedAt: now - 900, StartedAt: now - 800, EndedAt: now - 50}}},
			wantWait: msp(40)},
		{name: "skipped: never queued", rec: records.NodeRecord{State: records.NodeSkipped, FinishedAt: now - 5}},
		{name: "reset to pending by a rerun",
			rec: records.NodeRecord{State: records.NodePending, Attempt: 1, QueuedAt: now - 900, StartedAt: now - 800,
				Past: []records.PastAttempt{{Attempt: 1, Outcome: records.OutcomeReset, QueuedAt: now - 900, StartedAt: now - 800, EndedAt: now - 10}}}},
		{name: "builtin wait node: started when queued",
			rec:     records.NodeRecord{State: records.NodeRunning, Attempt: 1, QueuedAt: now - 300, StartedAt: now - 300},
			builtin: true, wantWait: msp(0), wantRun: msp(300)},
		{name: "builtin approval awaiting a decision: no queue, running since queued",
			rec:     records.NodeRecord{State: records.NodeQueued, Attempt: 1, QueuedAt: now - 300},
			builtin: true, wantWait: msp(0), wantRun: msp(300)},
		{name: "fan-out node: started when launched",
			rec: records.NodeRecord{State: records.NodeRunning, Attempt: 1, QueuedAt: now - 300, StartedAt: now - 300,
				FanOutCounts: records.FanOutCounts{FanOut: true, Count: 3, Next: 3, Active: 3}},
			wantWait: msp(0), wantRun: msp(300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wait, run := attemptTiming(tt.rec, tt.builtin, now)
			require.Equal(t, tt.wantWait, wait, "queue wait")
			require.Equal(t, tt.wantRun, run, "run")
		})
	}
}

func TestPastTiming(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		p        records.PastAttempt
		wantWait *int64
		wantRun  *int64
	}{
		{"failed after running", records.PastAttempt{Attempt: 1, Outcome: records.OutcomeFailed, QueuedAt: 100, StartedAt: 150, EndedAt: 400}, msp(50), msp(250)},
		{"lost before it started", records.PastAttempt{Attempt: 1, Outcome: records.OutcomeLost, QueuedAt: 100, EndedAt: 900}, msp(800), nil},
		{"reset of a pending node", records.PastAttempt{Attempt: 1, Outcome: records.OutcomeReset, EndedAt: 900}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wait, run := pastTiming(tt.p)
			require.Equal(t, tt.wantWait, wait, "queue wait")
			require.Equal(t, tt.wantRun, run, "run")
		})
	}
}

// TestViewNodeTimings: the run's node rows and a fan-out node's instance
// rows carry the figures, and a built-in handler counts as started when
// queued.
func TestViewNodeTimings(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_000_000)
	ms := now.UnixMilli()
	queued := records.NodeRecord{State: records.NodeQueued, Attempt: 1, QueuedAt: ms - 250}
	v := viewNode(dag.Node{ID: "a", Handler: "shell"}, queued, now)
	require.Equal(t, msp(250), v.QueueWaitMs)
	require.Nil(t, v.DurationMs)

	v = viewNode(dag.Node{ID: "ok", Handler: dag.HandlerApproval}, queued, now)
	require.Equal(t, msp(0), v.QueueWaitMs)
	require.Equal(t, msp(250), v.DurationMs)

	inst := records.NodeRecord{State: records.NodeSucceeded, Attempt: 1, QueuedAt: ms - 250, StartedAt: ms - 200, FinishedAt: ms - 50,
		Past: []records.PastAttempt{{Attempt: 1, Outcome: records.OutcomeLost, QueuedAt: ms - 900, StartedAt: ms - 850, EndedAt: ms - 300}}}
	v = viewNode(dag.Node{ID: "fan", Handler: "noop", Foreach: "<< input.items >>"}, inst, now)
	require.Equal(t, msp(50), v.QueueWaitMs)
	require.Equal(t, msp(150), v.DurationMs)
	require.Len(t, v.PastAttempts, 1)
	require.Equal(t, msp(50), v.PastAttempts[0].QueueWaitMs)
	require.Equal(t, msp(550), v.PastAttempts[0].DurationMs)
}
