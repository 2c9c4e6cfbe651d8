package core

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/template"
	"github.com/stretchr/testify/require"
)

func TestDiamondRunsToSuccess(t *testing.T) {
	t.Parallel()
	r, eff := newTestRun(t, node("A"), node("B", "A"), node("C", "A"), node("D", "B", "C"))
	require.Equal(t, []string{"A"}, dispatched(r, eff))
	require.ElementsMatch(t, []string{"B", "C"}, dispatched(r, complete(r, "A", `{"v":1}`)))
	require.Empty(t, dispatched(r, complete(r, "B", `"b"`)))
	require.Equal(t, []string{"D"}, dispatched(r, complete(r, "C", `"c"`)))
	eff = complete(r, "D", `"d"`)
	require.Equal(t, records.RunSucceeded, r.Status)
	require.True(t, eff.RunStatusChanged())
}

func TestDuplicateResultIsIgnored(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("A"), node("B", "A"))
	require.Equal(t, []string{"B"}, dispatched(r, complete(r, "A", `1`)))
	eff := &Effects{}
	r.Apply(Result{Now: 3000, Node: "A", Attempt: 1, Status: ResultSucceeded, Output: json.RawMessage(`2`)}, eff)
	require.Empty(t, eff.Dispatches)
	require.Empty(t, eff.Nodes)
	require.Len(t, eff.History, 1)
	require.JSONEq(t, `1`, string(r.Outputs[r.Index("A")]))
}

func TestTemplatesResolveFromUpstreamOutputs(t *testing.T) {
	t.Parallel()
	join := dag.Node{ID: "D", Handler: "noop", DependsOn: []string{"B", "C"},
		Config: json.RawMessage(`{"both":"<< B.result >> and << C.result >>","b":"<< B >>","who":"<< input.who >>"}`)}
	r, _ := newTestRun(t, node("B"), node("C"), join)
	complete(r, "B", `{"result":"x"}`)
	eff := complete(r, "C", `{"result":"y"}`)
	require.Len(t, eff.Dispatches, 1)
	require.JSONEq(t, `{"both":"x and y","b":{"result":"x"},"who":"world"}`, string(eff.Dispatches[0].Config))
}

// TestSecretsTravelAsSlots: a node referencing a secret is dispatched with
// "" where each secret-bearing string is and a slot describing it; data
// that looks like a secret reference stays data.
func TestSecretsTravelAsSlots(t *testing.T) {
	t.Parallel()
	b := dag.Node{ID: "B", Handler: "shell", DependsOn: []string{"A"},
		Config: json.RawMessage(`{"command":"echo << A.v >>","env":{"TOKEN":"<< secret.TOKEN >>","URL":"https://u:<< secret.PW >>@<< A.host >>/"}}`)}
	r, _ := newTestRun(t, node("A"), b)
	eff := complete(r, "A", `{"v":"<< secret.TOKEN >>","host":"h.example"}`)
	require.Len(t, eff.Dispatches, 1)
	d := eff.Dispatches[0]
	require.JSONEq(t, `{"command":"echo '<< secret.TOKEN >>'","env":{"TOKEN":"","URL":""}}`, string(d.Config))
	require.Equal(t, []template.Slot{
		{Path: []string{"env", "TOKEN"}, Parts: []template.Part{{Ref: "TOKEN"}}},
		{Path: []string{"env", "URL"}, Parts: []template.Part{{Text: "https://u:"}, {Ref: "PW"}, {Text: "@h.example/"}}},
	}, d.Secrets)

	plain, _ := newTestRun(t, node("A"), dag.Node{ID: "B", Handler: "noop", DependsOn: []string{"A"}, Config: json.RawMessage(`{"x":"<< A >>"}`)})
	eff = complete(plain, "A", `"<< secret.TOKEN >>"`)
	require.Empty(t, eff.Dispatches[0].Secrets, "a node without secret references has no slots")
}

func TestShellTemplatesAreQuoted(t *testing.T) {
	t.Parallel()
	sh := dag.Node{ID: "B", Handler: "shell", DependsOn: []string{"A"},
		Config: json.RawMessage(`{"command":"echo << A.v >>"}`)}
	r, _ := newTestRun(t, node("A"), sh)
	eff := complete(r, "A", `{"v":"; touch /tmp/x << A.v >>"}`)
	require.Len(t, eff.Dispatches, 1)
	var cfg struct{ Command string }
	require.NoError(t, json.Unmarshal(eff.Dispatches[0].Config, &cfg))
	require.Equal(t, `echo '; touch /tmp/x << A.v >>'`, cfg.Command)
}

func TestMissingTemplateKeyFailsNode(t *testing.T) {
	t.Parallel()
	b := dag.Node{ID: "B", Handler: "noop", DependsOn: []string{"A"}, Config: json.RawMessage(`{"x":"<< A.nope >>"}`)}
	r, _ := newTestRun(t, node("A"), b)
	complete(r, "A", `{"v":1}`)
	require.Equal(t, records.NodeFailed, state(r, "B"))
	require.Contains(t, r.Nodes[1].Error, "node B")
	require.Contains(t, r.Nodes[1].Error, "nope")
	require.Equal(t, records.RunFailed, r.Status)
}

func TestRetryWaitsOnDurableTimer(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Retry = &dag.RetryPolicy{MaxAttempts: 2, InitialInterval: dag.Duration(time.Second)}
	r, _ := newTestRun(t, a)
	eff := failNode(r, "A", false)
	require.Equal(t, records.NodeRetryWait, state(r, "A"))
	require.Len(t, eff.Timers, 1)
	require.Equal(t, TimerRetry, eff.Timers[0].Kind)
	require.Equal(t, int64(3000), eff.Timers[0].At)

	eff = &Effects{}
	r.Apply(Timer{Now: 3000, Kind: TimerRetry, Node: "A", Attempt: 1}, eff)
	require.Len(t, eff.Dispatches, 1)
	require.Equal(t, 2, eff.Dispatches[0].Attempt)
	r.Apply(Timer{Now: 3001, Kind: TimerRetry, Node: "A", Attempt: 1}, eff) // duplicate timer
	require.Len(t, eff.Dispatches, 1)

	failNode(r, "A", false)
	require.Equal(t, records.NodeFailed, state(r, "A"))
	require.Equal(t, records.RunFailed, r.Status)
}

func TestPermanentFailureSkipsRetries(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Retry = &dag.RetryPolicy{MaxAttempts: 5}
	r, _ := newTestRun(t, a, node("B", "A"))
	failNode(r, "A", true)
	require.Equal(t, records.NodeFailed, state(r, "A"))
	require.Equal(t, records.NodeSkipped, state(r, "B"))
	require.True(t, r.Nodes[1].UpstreamFailed)
	require.Equal(t, records.RunFailed, r.Status)
}

func TestTriggerRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		rule     dag.TriggerRule
		failA    bool
		wantRuns bool
	}{
		{"all_success after success", dag.TriggerAllSuccess, false, true},
		{"all_success after failure", dag.TriggerAllSuccess, true, false},
		{"all_done after failure", dag.TriggerAllDone, true, true},
		{"one_failed after failure", dag.TriggerOneFailed, true, true},
		{"one_failed after success", dag.TriggerOneFailed, false, false},
		{"none_failed after failure", dag.TriggerNoneFailed, true, false},
		{"one_success after failure", dag.TriggerOneSuccess, true, true}, // B succeeds
		{"all_failed after success", dag.TriggerAllFailed, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := node("C", "A", "B")
			c.TriggerRule = tc.rule
			r, _ := newTestRun(t, node("A"), node("B"), c)
			var effs []*Effects
			if tc.failA {
				effs = append(effs, failNode(r, "A", true))
			} else {
				effs = append(effs, complete(r, "A", `1`))
			}
			effs = append(effs, complete(r, "B", `2`))
			ran := false
			for _, e := range effs {
				for _, id := range dispatched(r, e) {
					ran = ran || id == "C"
				}
			}
			require.Equal(t, tc.wantRuns, ran)
			if !tc.wantRuns {
				require.Equal(t, records.NodeSkipped, state(r, "C"))
			}
		})
	}
}

func TestWhenFalseSkipsAndRunSucceeds(t *testing.T) {
	t.Parallel()
	b := node("B", "A")
	b.When = "A.n > 5"
	r, _ := newTestRun(t, node("A"), b, node("C", "B"))
	complete(r, "A", `{"n":3}`)
	require.Equal(t, records.NodeSkipped, state(r, "B"))
	require.True(t, r.Nodes[1].WhenSkipped)
	require.Equal(t, records.NodeSkipped, state(r, "C"))
	require.Equal(t, records.RunSucceeded, r.Status)
}

func TestDeadlineFailsSilentAttempt(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Timeout = dag.Duration(2 * time.Second)
	r, eff := newTestRun(t, a)
	require.Len(t, eff.Timers, 1)
	require.Equal(t, TimerDeadline, eff.Timers[0].Kind)
	at := eff.Timers[0].At
	eff = &Effects{}
	r.Apply(Timer{Now: at, Kind: TimerDeadline, Node: "A", Attempt: 1}, eff)
	require.Equal(t, records.NodeFailed, state(r, "A"))
	require.Contains(t, r.Nodes[0].Error, "timed out")
}

func TestCancelStopsEverything(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("A"), node("B", "A"))
	eff := &Effects{}
	r.Apply(Control{Now: 1500, Action: ControlCancel}, eff)
	require.Equal(t, records.RunCancelled, r.Status)
	require.Equal(t, records.NodeCancelled, state(r, "A"))
	require.Equal(t, records.NodeCancelled, state(r, "B"))
	eff = complete(r, "A", `1`) // late result after cancel
	require.Empty(t, eff.Dispatches)
	require.Equal(t, records.NodeCancelled, state(r, "A"))
}

func TestRetryControlRerunsOnlyFailedAndSkipped(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("A"), node("B", "A"), node("C", "B"), node("X"))
	complete(r, "A", `1`)
	complete(r, "X", `1`)
	failNode(r, "B", true)
	require.Equal(t, records.RunFailed, r.Status)
	eff := &Effects{}
	r.Apply(Control{Now: 5000, Action: ControlRetry}, eff)
	require.Equal(t, []string{"B"}, dispatched(r, eff))
	require.Equal(t, records.NodePending, state(r, "C"))
	require.Equal(t, records.NodeSucceeded, state(r, "A"))
	require.Equal(t, 2, r.Nodes[1].Attempt)
	complete(r, "B", `2`)
	complete(r, "C", `3`)
	require.Equal(t, records.RunSucceeded, r.Status)
}

// TestRetryControlStartsAFreshAttemptBudget: a retry of the run gives a
// node whose retries ran out its policy's attempts again (as Airflow's
// clear and Argo's retry do), numbered on from the last: attempts 3 and 4
// of a node with max_attempts 2, the idempotency keys never reused.
func TestRetryControlStartsAFreshAttemptBudget(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Retry = &dag.RetryPolicy{MaxAttempts: 2, InitialInterval: dag.Duration(time.Second), Backoff: dag.BackoffExponential}
	r, _ := newTestRun(t, a)
	retryDue := func() *Effects {
		eff := &Effects{}
		r.Apply(Timer{Now: r.Nodes[0].RetryAt, Kind: TimerRetry, Node: "A", Attempt: r.Nodes[0].Attempt}, eff)
		return eff
	}
	failNode(r, "A", false)
	require.Equal(t, 2, retryDue().Dispatches[0].Attempt)
	failNode(r, "A", false)
	require.Equal(t, records.RunFailed, r.Status)
	require.Equal(t, 2, r.Nodes[0].MaxAttempt(a.Retry.Attempts()))

	eff := &Effects{}
	r.Apply(Control{Now: 5000, Action: ControlRetry}, eff)
	require.Equal(t, 3, eff.Dispatches[0].Attempt)
	require.Equal(t, 4, r.Nodes[0].MaxAttempt(a.Retry.Attempts()), "the retry's budget: attempts 3 and 4")
	failNode(r, "A", false)
	require.Equal(t, records.NodeRetryWait, state(r, "A"), "attempt 3 of 4 failed: retried")
	require.Equal(t, int64(2000+1000), r.Nodes[0].RetryAt, "the backoff restarts too: the initial interval, not attempt 3's")
	require.Equal(t, 4, retryDue().Dispatches[0].Attempt)
	failNode(r, "A", false)
	require.Equal(t, records.NodeFailed, state(r, "A"), "attempt 4 of 4 failed: no more")
	require.Equal(t, records.RunFailed, r.Status)
}

// TestRetryWithoutSlotWaitsForAdmit: a retry the shell found no workflow
// concurrency slot for reopens the run held — nodes reset, nothing
// dispatched, status pending — and Admit then starts exactly the reset
// nodes that are ready.
func TestRetryWithoutSlotWaitsForAdmit(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("A"), node("B", "A"), node("C", "B"))
	complete(r, "A", `1`)
	failNode(r, "B", true)
	require.Equal(t, records.RunFailed, r.Status)
	eff := &Effects{}
	r.Apply(Control{Now: 5000, Action: ControlRetry, NoSlot: true}, eff)
	require.Empty(t, eff.Dispatches)
	require.Equal(t, records.RunPending, r.Status)
	require.True(t, r.Held)
	require.True(t, eff.RunStatusChanged())
	require.Equal(t, records.NodePending, state(r, "B"))
	require.Contains(t, strings.Join(eff.History, "\n"), "retry: waiting for a workflow concurrency slot")

	eff = &Effects{}
	r.Apply(Admit{Now: 6000}, eff)
	require.Equal(t, []string{"B"}, dispatched(r, eff))
	require.Equal(t, records.RunRunning, r.Status)
	require.False(t, r.Held)
	complete(r, "B", `2`)
	complete(r, "C", `3`)
	require.Equal(t, records.RunSucceeded, r.Status)
}

func TestRerunFromResetsDownstream(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("A"), node("B", "A"), node("C", "B"))
	complete(r, "A", `1`)
	complete(r, "B", `2`)
	complete(r, "C", `3`)
	eff := &Effects{}
	r.Apply(Control{Now: 5000, Action: ControlRerunFrom, Node: "B"}, eff)
	require.Equal(t, []string{"B"}, dispatched(r, eff))
	require.Nil(t, r.Outputs[r.Index("C")])
	require.NotNil(t, r.Outputs[r.Index("A")])
}

func TestRejectedInputFailsRun(t *testing.T) {
	t.Parallel()
	def := &dag.Definition{Name: "test", Inputs: map[string]dag.InputSpec{"x": {Required: true}}, Nodes: []dag.Node{node("A")}}
	g, err := dag.Compile(def)
	require.NoError(t, err)
	p, err := NewPlan(g)
	require.NoError(t, err)
	r, err := NewRun("r1", 1, p, nil, 1)
	require.ErrorContains(t, err, `missing required input "x"`)
	eff := &Effects{}
	r.Reject(err.Error(), 1, eff)
	require.Equal(t, records.RunFailed, r.Status)
	require.True(t, eff.Created)
	require.Len(t, eff.Nodes, 1)
}

func TestReconcileRepairs(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Retry = &dag.RetryPolicy{MaxAttempts: 2}
	r, _ := newTestRun(t, a, node("B"))
	// A's worker started it, then died: its claim is gone.
	r.Apply(Result{Now: 1100, Node: "A", Attempt: 1, Status: ResultRunning, Worker: "w1"}, &Effects{})
	late := int64(1000) + RedispatchAfter.Milliseconds() + 1
	eff := &Effects{}
	r.Apply(Reconcile{Now: late, Claimed: map[int]bool{}}, eff)
	// A's attempt was lost, not failed: the same attempt is sent again and
	// its loss is in the attempt's past.
	require.Equal(t, records.NodeQueued, state(r, "A"))
	require.Equal(t, 1, r.Nodes[0].Attempt)
	require.Equal(t, 1, r.Nodes[0].Lost)
	require.Equal(t, []records.PastAttempt{{Attempt: 1, Outcome: records.OutcomeLost, Worker: "w1", QueuedAt: 1000, EndedAt: late,
		Error: "lost: worker w1 stopped responding"}}, r.Nodes[0].Past)
	// B's dispatch was never claimed for longer than RedispatchAfter: sent again, same attempt.
	require.Equal(t, []string{"A", "B"}, dispatched(r, eff))
	require.Equal(t, 1, eff.Dispatches[0].Attempt)
	require.Equal(t, 1, eff.Dispatches[1].Attempt)
	// A fails for real this time: the retry policy applies.
	r.Apply(Result{Now: late + 10, Node: "A", Attempt: 1, Status: ResultFailed, Error: "boom", Worker: "w2"}, &Effects{})
	require.Equal(t, records.NodeRetryWait, state(r, "A"))
	// The retry timer was lost: the next pass fires the overdue retry.
	eff = &Effects{}
	r.Apply(Reconcile{Now: late + 60_000, Claimed: map[int]bool{1: true}}, eff)
	require.Equal(t, []string{"A"}, dispatched(r, eff))
	require.Equal(t, 2, r.Nodes[0].Attempt)
	require.Zero(t, r.Nodes[0].Lost, "a new attempt starts with no losses")
	require.Len(t, r.Nodes[0].Past, 2)
	require.Equal(t, records.OutcomeFailed, r.Nodes[0].Past[1].Outcome)
	require.Equal(t, "boom", r.Nodes[0].Past[1].Error)
	// A claimed attempt is left alone.
	eff = &Effects{}
	r.Apply(Reconcile{Now: late + 120_000, Claimed: map[int]bool{0: true, 1: true}}, eff)
	require.Empty(t, eff.Dispatches)
	require.Empty(t, eff.Changes)
}

// TestReconcileAfterTakeoverRedispatchesAtOnce: right after a takeover, a
// queued attempt nobody claimed is sent again however recently it was
// queued (its dispatch may have died with the previous holder), a claimed
// one is left alone, and the history says why.
func TestReconcileAfterTakeoverRedispatchesAtOnce(t *testing.T) {
	t.Parallel()
	r, _ := newTestRun(t, node("A"), node("B"))
	soon := int64(1000) + 10 // well within RedispatchAfter of the queueing
	eff := &Effects{}
	r.Apply(Reconcile{Now: soon, Claimed: map[int]bool{1: true}}, eff)
	require.Empty(t, eff.Dispatches, "an ordinary pass re-sent a fresh dispatch")

	eff = &Effects{}
	r.Apply(Reconcile{Now: soon, Claimed: map[int]bool{1: true}, Takeover: true}, eff)
	require.Equal(t, []string{"A"}, dispatched(r, eff))
	require.Equal(t, 1, eff.Dispatches[0].Attempt)
	require.Contains(t, strings.Join(eff.History, "\n"), "reconciler: re-dispatched unclaimed node A attempt 1 (run taken over)")
}

// TestReconcileLeavesUnofferedHandlersQueued: an unclaimed attempt of a
// handler no live worker offers is not sent again (nobody could claim it;
// its dispatch waits in the topic for the pool that will), and leaves no
// history line; once the handler is offered it is re-sent as any other.
func TestReconcileLeavesUnofferedHandlersQueued(t *testing.T) {
	t.Parallel()
	a := node("A")
	a.Handler = "resize"
	r, _ := newTestRun(t, a, node("B"))
	late := int64(1000) + RedispatchAfter.Milliseconds() + 1
	offered := func(h string) bool { return h == "noop" }
	eff := &Effects{}
	r.Apply(Reconcile{Now: late, Offered: offered}, eff)
	require.Equal(t, []string{"B"}, dispatched(r, eff), "B's handler is offered: re-sent; A's is not")
	require.NotContains(t, strings.Join(eff.History, "\n"), "node A")
	require.Equal(t, records.NodeQueued, state(r, "A"))
	require.EqualValues(t, 1000, r.Nodes[0].QueuedAt, "A keeps its queue time: its wait shows whole")

	eff = &Effects{}
	r.Apply(Reconcile{Now: late + 1, Takeover: true, Offered: offered}, eff)
	require.Equal(t, []string{"B"}, dispatched(r, eff), "a takeover re-sends at once only what can be claimed, too")

	eff = &Effects{}
	r.Apply(Reconcile{Now: late + 2, Offered: func(string) bool { return true }}, eff)
	require.Equal(t, []string{"A"}, dispatched(r, eff), "a pool offering resize appeared: A is re-sent")
	require.Contains(t, strings.Join(eff.History, "\n"), "reconciler: re-dispatched unclaimed node A attempt 1")
}

func TestOversizedConfigFailsNode(t *testing.T) {
	t.Parallel()
	b := dag.Node{ID: "B", Handler: "noop", DependsOn: []string{"A"}, Config: json.RawMessage(`{"x":"<< A >>"}`)}
	r, _ := newTestRun(t, node("A"), b)
	big, err := json.Marshal(strings.Repeat("x", MaxConfigBytes))
	require.NoError(t, err)
	eff := complete(r, "A", string(big))
	require.Empty(t, eff.Dispatches)
	require.Equal(t, records.NodeFailed, state(r, "B"))
	require.Contains(t, r.Nodes[1].Error, "dispatch limit")
}
