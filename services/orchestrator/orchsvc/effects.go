package orchsvc

import (
	"context"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/core"
	"github.com/redis/go-redis/v9"
)

// toWrite turns a run's effects into one fenced Redis write.
func (s *Service) toWrite(g *runBatch) statestore.RunWrite {
	r, eff := g.o.run, g.eff
	g.spans = nil
	if len(eff.Changes) > 0 || eff.RunStatusChanged() {
		g.spans = eventSpans(r, eff.Changes)
		r.Seq += uint64(len(g.spans)) // one seq per RunEvent published
		eff.RunChanged = true
	}
	w := statestore.RunWrite{Run: g.run, Fence: g.o.fence, Lock: g.o.lock, Create: eff.Created,
		Nodes: make(map[string][]byte, len(eff.Nodes)), Outputs: make(map[string][]byte, len(eff.Outputs))}
	if eff.RunChanged || eff.Created {
		w.RunFields = runFields(r, eff.Created, g.events)
	}
	for _, i := range eff.Nodes {
		w.Nodes[r.NodeID(i)] = r.Nodes[i].Encode()
	}
	for _, i := range eff.Outputs {
		if o := r.Outputs[i]; records.StoresOutput(o) {
			w.Outputs[r.NodeID(i)] = o
		}
	}
	for _, i := range eff.ClearedOutputs {
		w.ClearOutputs = append(w.ClearOutputs, r.NodeID(i))
	}
	w.FanOuts = fanOutWrites(r, &eff.FanOut)
	w.Ended = endedAttempts(r, eff)
	w.Orphans = orphanedClaims(r, eff)
	ts := time.Now().UTC().Format(time.RFC3339Nano)
	for _, h := range eff.History {
		w.History = append(w.History, ts+" "+h)
	}
	return w
}

// endedAttempts lists the attempts eff takes out of flight, whose claims
// the write deletes. Attempt numbers only grow, so an attempt that left
// flight never returns to it: a later change of the same node in flight
// names a newer attempt. A fan-out node's own changes name no attempt of
// a worker (its instances' changes do).
func endedAttempts(r *core.Run, eff *core.Effects) []statestore.Attempt {
	var out []statestore.Attempt
	for _, c := range eff.Changes {
		if c.Attempt > 0 && !c.State.InFlight() && (c.FanOut || !r.Nodes[c.Node].FanOut) {
			out = append(out, statestore.Attempt{Run: r.ID, Node: r.NodeID(c.Node), Instance: c.Instance, Attempt: c.Attempt})
		}
	}
	return out
}

func runFields(r *core.Run, created bool, events []inbound) map[string]string {
	f := map[string]string{
		records.FieldStatus: string(r.Status), records.FieldStarted: itoa(r.StartedAt),
		records.FieldFinished: itoa(r.FinishedAt), records.FieldError: r.Error,
		records.FieldSeq: strconv.FormatUint(r.Seq, 10), records.FieldPaused: boolStr(r.Paused),
		records.FieldHeld: boolStr(r.Held),
	}
	if created {
		f[records.FieldWorkflow], f[records.FieldVersion] = r.Workflow, strconv.Itoa(r.Version)
		f[records.FieldInput], f[records.FieldCreated] = string(r.Input), itoa(r.CreatedAt)
		for _, in := range events {
			if in.start != nil {
				f[records.FieldRequestedBy] = in.start.RequestedBy
			}
		}
	}
	return f
}

// queueIndexes keeps the run indexes and durable timers in step with a
// write. They live outside the run's hash slot, so they ride in the same
// pipeline as the run's fenced write but not in its script, and a crash
// (AOF and replicas keep a prefix of what ran) can keep the write and lose
// what follows it; a redelivered batch then applies as duplicates that
// write nothing. So what makes the system look at a run — its index
// entries, active-runs entry, timers — is queued before the write
// (queueIndexes), and what lets it forget a run — the active entry of a
// run that ended — after it (queueUnindex). A write refused or lost after
// its entries were added leaves an extra entry, which is harmless: the
// reconciler drops active entries of ended runs, and a timer fired for an
// attempt that moved on is ignored.
func (s *Service) queueIndexes(ctx context.Context, pipe redis.Pipeliner, g *runBatch) {
	r, eff := g.o.run, g.eff
	score := float64(r.CreatedAt)
	if eff.Created {
		pipe.ZAdd(ctx, s.keys.AllRunsOf(g.run), redis.Z{Score: score, Member: g.run})
		pipe.ZAdd(ctx, s.keys.WorkflowRunsOf(r.Workflow, g.run), redis.Z{Score: score, Member: g.run})
	}
	if eff.RunStatusChanged() && !r.Status.Terminal() {
		pipe.ZAdd(ctx, s.keys.ActiveRunsOf(g.run), redis.Z{Score: score, Member: g.run})
	}
	for _, t := range eff.Timers {
		m := statestore.Timer{Run: g.run, Kind: int(timerKind(t.Kind)), Node: t.Node, Instance: t.Instance, Attempt: t.Attempt}
		pipe.ZAdd(ctx, s.keys.TimersOf(g.run), redis.Z{Score: float64(t.At), Member: m.Member()})
	}
}

// queueUnindex queues, after g's write, the removal of a run that ended
// from the active-runs index (see queueIndexes), and of the durable timers
// the write left with nothing to do (disarmed). Were they left, each would
// fire later as a TIMER control that the run's owner loads the run for
// only to ignore: one per task with a timeout. A write refused after them
// (the run changed owner meanwhile) may drop a deadline the new owner
// still wants; the reconciler repairs overdue deadlines, as for a timer
// lost with Redis's last second, and the worker enforces a task's timeout
// first.
func (s *Service) queueUnindex(ctx context.Context, pipe redis.Pipeliner, g *runBatch) {
	r := g.o.run
	ended := g.eff.RunStatusChanged() && r.Status.Terminal()
	if ended {
		pipe.ZRem(ctx, s.keys.ActiveRunsOf(g.run), g.run)
		pipe.ZRem(ctx, s.keys.BusyRunsOf(g.run), g.run)
		g.busy = busyDrop
	}
	if stale := disarmed(r, g.write.Ended, ended); len(stale) > 0 {
		pipe.ZRem(ctx, s.keys.TimersOf(g.run), stale...)
	}
}

// disarmed lists the timer members (as queueIndexes wrote them) that the
// ended attempts and, when runEnded, the run's end leave pointless: an
// ended attempt's deadline (armed for a node with a timeout) and a wait
// node's wake, and the run's own deadline. Retry timers stay: an attempt
// waiting for its retry is not among the ended ones until it is stopped,
// and a retry fired for a stopped node is ignored like any stale timer.
func disarmed(r *core.Run, ended []statestore.Attempt, runEnded bool) []any {
	var out []any
	member := func(kind core.TimerKind, node string, inst, attempt int) {
		out = append(out, statestore.Timer{Run: r.ID, Kind: int(timerKind(kind)), Node: node, Instance: inst, Attempt: attempt}.Member())
	}
	defs := r.Plan.Graph.Def
	for _, a := range ended {
		i := r.Index(a.Node)
		if i < 0 {
			continue
		}
		if defs.Nodes[i].Timeout > 0 {
			member(core.TimerDeadline, a.Node, a.Instance, a.Attempt)
		}
		if defs.Nodes[i].Handler == core.HandlerWait {
			member(core.TimerWake, a.Node, a.Instance, a.Attempt)
		}
	}
	if runEnded && defs.Timeout > 0 {
		member(core.TimerRunDeadline, "", 0, 0)
	}
	return out
}

// timerKinds maps the core's timer kinds to their wire values (both ways:
// timers are stored and sent as wire values and decoded back).
var timerKinds = map[core.TimerKind]eventsv1.TimerKind{
	core.TimerRetry:       eventsv1.TimerKind_TIMER_KIND_RETRY,
	core.TimerDeadline:    eventsv1.TimerKind_TIMER_KIND_DEADLINE,
	core.TimerRunDeadline: eventsv1.TimerKind_TIMER_KIND_RUN_DEADLINE,
	core.TimerWake:        eventsv1.TimerKind_TIMER_KIND_WAKE,
}

func timerKind(k core.TimerKind) eventsv1.TimerKind { return timerKinds[k] }

// coreTimerKind is the core kind of wire value k, or 0 when unknown.
func coreTimerKind(k eventsv1.TimerKind) core.TimerKind {
	for c, w := range timerKinds {
		if w == k {
			return c
		}
	}
	return 0
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
