package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// inbound is one fetched dispatch on its way to being settled.
type inbound struct {
	d   *eventsv1.TaskDispatch
	id  statestore.Attempt
	fp  uint64 // id's fingerprint
	ttl time.Duration
	// poison, when set, is why the message is dead-lettered instead.
	poison string
	// skip marks a dispatch of a handler this worker does not offer: it is
	// another pool's (GroupFor), left unclaimed for the workers that offer
	// its handler, which see it in their own group.
	skip bool
	// dup marks a dispatch whose attempt appeared earlier in the same
	// batch: it is dropped without a claim.
	dup bool
	// again marks a dispatch of an attempt this worker claimed lately. It
	// is claimed all the same, and dropped unless the claim is fresh
	// (statestore.ClaimOK rather than ClaimMine): nobody held the attempt,
	// so it was queued again without its result being stored — the write
	// that applied it lost with a Redis failover, say — and only running it
	// again finishes the node. Dropped without that check, its every
	// re-dispatch would land on this worker (dispatches are keyed by run)
	// and the run would wait for ever.
	again bool
	// claim indexes the batch's claim results; -1 when not claimed.
	claim int
	// at is the message's position in its batch.
	at int
	// headers are the message's headers (its trace context).
	headers eventbus.Headers
}

// prepare decodes msgs and lists the claims they need, in order.
func (w *Worker) prepare(msgs []eventbus.Message) ([]inbound, []statestore.ClaimRequest) {
	ins := make([]inbound, len(msgs))
	var reqs []statestore.ClaimRequest
	seen := make(map[uint64]int, len(msgs)) // fingerprint → the first inbound with it
	for i, m := range msgs {
		in := &ins[i]
		in.claim, in.at = -1, i
		in.headers = m.Headers
		in.d = &eventsv1.TaskDispatch{}
		if err := eventbus.Decode(m, in.d); err != nil {
			in.poison = err.Error()
			continue
		}
		if err := checkDispatch(in.d); err != nil {
			in.poison = err.Error()
			continue
		}
		in.id = statestore.Attempt{Run: in.d.GetRunId(), Node: in.d.GetNodeId(), Instance: int(in.d.GetInstance()), Attempt: int(in.d.GetAttempt())}
		in.ttl = heartbeatTimeout(in.d)
		if _, ok := w.cfg.Handlers[in.d.GetHandler()]; !ok {
			in.skip = true
			continue
		}
		in.fp = fingerprint(in.id)
		if earlierInBatch(ins[:i], seen, in.id, in.fp) {
			in.dup = true
			continue
		}
		seen[in.fp] = i
		in.again = w.recent.has(in.id, in.fp)
		in.claim = len(reqs)
		reqs = append(reqs, statestore.ClaimRequest{Attempt: in.id, TTL: in.ttl})
	}
	return ins, reqs
}

// earlierInBatch reports whether attempt id (fingerprint fp) is claimed by
// an earlier dispatch of the batch, ins; seen maps the fingerprints of
// those claims to their index in ins. Two attempts with one fingerprint are
// told apart by a scan.
func earlierInBatch(ins []inbound, seen map[uint64]int, id statestore.Attempt, fp uint64) bool {
	j, ok := seen[fp]
	switch {
	case !ok:
		return false
	case ins[j].id == id:
		return true
	}
	for k := range ins {
		if ins[k].claim >= 0 && ins[k].id == id {
			return true
		}
	}
	return false
}

// settleAll makes a fetched batch durable: poison messages are
// dead-lettered, dispatches of handlers this worker does not offer are
// skipped, then every other dispatch is claimed in one pipelined round
// trip, then each is dropped, dead-lettered (its records in Redis are
// corrupt), or returned as an attempt to execute. Redis and Kafka errors are retried with backoff;
// settled is the length of the prefix of msgs that was settled before ctx
// ended (all of it unless shutting down).
//
// The claim is the durable effect of a dispatch: once it is stored the
// message may be committed, because if this worker dies the claim expires and
// the orchestrator's reconciler retries the attempt. A dispatch that
// arrived ahead of the write queueing its attempt (statestore.ClaimAhead)
// is returned in ahead, unsettled: settleAhead claims it again.
func (w *Worker) settleAll(ctx context.Context, prod eventbus.Publisher, msgs []eventbus.Message) (settled int, attempts []*attempt, ahead []inbound) {
	ins, reqs := w.prepare(msgs)
	cut := len(ins)
	for i, in := range ins {
		if in.poison != "" && !w.deadLetter(ctx, prod, msgs[i], in.poison) {
			cut = i
			break
		}
	}
	ins = ins[:cut]
	reqs = reqs[:claimsBefore(ins)]
	claimed := traceNow()
	res, ok := w.claimAll(ctx, reqs)
	answered := traceNow()
	for i, in := range ins {
		switch {
		case in.poison != "":
		case in.skip:
			w.stats.skipped.Add(1)
			w.metrics.skip()
			w.attemptLog(in).Debug("dispatch skipped: no handler of its name here (another pool's)")
		case in.dup:
			w.stats.dropped.Add(1)
			w.attemptLog(in).Debug("dispatch dropped: the attempt is earlier in the same batch")
		case !ok:
			return i, attempts, ahead
		case res[in.claim].Result == statestore.ClaimCorrupt:
			if !w.deadLetter(ctx, prod, msgs[i], res[in.claim].Problem) {
				return i, attempts, ahead
			}
		case res[in.claim].Result == statestore.ClaimAhead:
			ahead = append(ahead, in)
		default:
			if a := w.claimed(ctx, in, res[in.claim].Result); a != nil {
				w.traceAttempt(a, in.headers, claimed, answered)
				attempts = append(attempts, a)
			}
		}
	}
	return len(ins), attempts, ahead
}

// Pauses between the claims of a dispatch ahead of its attempt's record.
const (
	firstAheadPause = 200 * time.Microsecond
	maxAheadPause   = 100 * time.Millisecond
)

// settleAhead claims the dispatches of ahead again, after a pause that
// doubles each round, until each is claimed or refused, or until
// cfg.AheadWindow has passed: then the dispatches still ahead are dropped
// (the write that would have queued their attempts failed, and the
// orchestrator applies the events behind it again, dispatching anew). It
// returns the attempts to execute and whether every dispatch was settled;
// false when ctx ended first, with the unsettled ones left uncommitted.
//
// The orchestrator publishes a dispatch beside the write that queues its
// attempt, so one that overtakes that write is the common case here, and
// its record lands within about one Redis round trip.
func (w *Worker) settleAhead(ctx context.Context, prod eventbus.Publisher, msgs []eventbus.Message, ahead []inbound) (attempts []*attempt, settled bool) {
	deadline := time.Now().Add(w.cfg.AheadWindow)
	w.stats.ahead.Add(int64(len(ahead)))
	for pause := firstAheadPause; len(ahead) > 0; pause = min(2*pause, maxAheadPause) {
		if time.Now().After(deadline) {
			for _, in := range ahead {
				w.stats.dropped.Add(1)
				w.attemptLog(in).Info("dispatch dropped: no record named its attempt within the ahead window", logkey.Window, w.cfg.AheadWindow)
			}
			return attempts, true
		}
		if clock.Sleep(ctx, pause) != nil {
			return attempts, false
		}
		reqs := make([]statestore.ClaimRequest, len(ahead))
		for i, in := range ahead {
			reqs[i] = statestore.ClaimRequest{Attempt: in.id, TTL: in.ttl}
		}
		claimed := traceNow()
		res, ok := w.claimAll(ctx, reqs)
		if !ok {
			return attempts, false
		}
		answered := traceNow()
		still := ahead[:0]
		for i, in := range ahead {
			switch r := res[i]; r.Result {
			case statestore.ClaimAhead:
				still = append(still, in)
			case statestore.ClaimCorrupt:
				if !w.deadLetter(ctx, prod, msgs[in.at], r.Problem) {
					return attempts, false
				}
			default:
				if a := w.claimed(ctx, in, r.Result); a != nil {
					w.traceAttempt(a, in.headers, claimed, answered)
					attempts = append(attempts, a)
				}
			}
		}
		ahead = still
	}
	return attempts, true
}

// claimsBefore counts the claims the dispatches of ins need.
func claimsBefore(ins []inbound) int {
	n := 0
	for _, in := range ins {
		if in.claim >= 0 {
			n++
		}
	}
	return n
}

// claimed acts on a dispatch's claim result: a refused claim drops it, and
// an accepted one becomes an attempt whose heartbeats do their I/O with
// ctx's values (only dispatches of this worker's handlers are claimed).
//
// Its own claim (ClaimMine) runs an attempt this worker has not claimed
// lately (a claim call repeated after its answer was lost), and drops a
// duplicate of one it has. A fresh claim of one it has (again) runs it once
// more — unless it is still running here (its heartbeat keeps the claim,
// whose value is the same) or its result left less than a heartbeat timeout
// ago and may still be on its way to being stored (the claim is given back:
// a worker frozen past its liveness, whose attempt was declared lost and
// sent again, finishes it and publishes its result, and the new dispatch
// must not run it a second time; if that result is lost too, the next
// re-send finds the window passed).
func (w *Worker) claimed(ctx context.Context, in inbound, res statestore.ClaimResult) *attempt {
	switch {
	case res == statestore.ClaimMine && !in.again:
	case res == statestore.ClaimOK && in.again && w.inflight.has(in.id):
		w.stats.dropped.Add(1)
		w.attemptLog(in).Debug("dispatch dropped: the attempt is still running here", logkey.Claim, res.String())
		return nil
	case res == statestore.ClaimOK && in.again && w.recent.leftWithin(in.id, in.fp, time.Now(), in.ttl):
		if err := w.claims.ReleaseClaim(ctx, in.id, w.holder.String()); err != nil {
			w.attemptLog(in).Warn("give back the claim of a dispatch dropped: it expires instead", logkey.Err, err)
		}
		w.stats.dropped.Add(1)
		w.attemptLog(in).Debug("dispatch dropped: this worker ran the attempt moments ago; its result may still be on its way", logkey.Claim, res.String())
		return nil
	case res == statestore.ClaimOK && in.again:
		w.attemptLog(in).Warn("attempt dispatched again after this worker ran it, with nobody holding it: its result was never stored (lost with a Redis failover?); running it again with the same idempotency key")
	case res != statestore.ClaimOK:
		w.stats.dropped.Add(1)
		w.attemptLog(in).Debug("dispatch dropped", logkey.Claim, res.String())
		return nil
	}
	w.recent.add(in.id, in.fp)
	return w.newAttempt(ctx, in.id, in.fp, in.d, w.cfg.Handlers[in.d.GetHandler()], in.ttl)
}

// attemptLog is the logger of in's attempt. Its attributes are formatted
// only when it first logs (most attempts log nothing at the default level):
// slog's text and JSON handlers format With's attributes at once, which cost
// about 3 % of braid dev's CPU on a 10,000-node fan-out of noop tasks.
func (w *Worker) attemptLog(in inbound) *slog.Logger {
	return slog.New(&lazyAttrs{parent: w.log.Handler(), attrs: attemptAttrs(in.id, in.d.GetHandler())})
}

// attemptAttrs are the log attributes naming an attempt.
func attemptAttrs(id statestore.Attempt, handler string) []slog.Attr {
	return []slog.Attr{
		slog.String(logkey.RunID, id.Run), slog.String(logkey.NodeID, id.Node), slog.Int(logkey.Instance, id.Instance),
		slog.Int(logkey.Attempt, id.Attempt), slog.String(logkey.Handler, handler),
	}
}

// checkDispatch rejects a dispatch that cannot name an attempt.
func checkDispatch(d *eventsv1.TaskDispatch) error {
	switch {
	case d.GetRunId() == "":
		return errors.New("invalid dispatch: empty run_id")
	case d.GetNodeId() == "":
		return fmt.Errorf("invalid dispatch run=%s: empty node_id", d.GetRunId())
	case d.GetAttempt() < 1:
		return fmt.Errorf("invalid dispatch run=%s node=%s: attempt %d < 1", d.GetRunId(), d.GetNodeId(), d.GetAttempt())
	case d.GetInstance() < 0:
		return fmt.Errorf("invalid dispatch run=%s node=%s: instance %d < 0", d.GetRunId(), d.GetNodeId(), d.GetInstance())
	}
	return nil
}

// heartbeatTimeout is the dispatch's heartbeat timeout (the claim TTL),
// DefaultHeartbeatTimeout when unset.
func heartbeatTimeout(d *eventsv1.TaskDispatch) time.Duration {
	if ms := d.GetHeartbeatTimeoutMs(); ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return DefaultHeartbeatTimeout
}

// claimAll runs the batch's claims until Redis answers; false if ctx ended
// first. The call itself is not cancelled by ctx, so claims that were
// stored are also known to be ours.
func (w *Worker) claimAll(ctx context.Context, reqs []statestore.ClaimRequest) ([]statestore.Claimed, bool) {
	for try := 0; ; try++ {
		cctx, cancel := w.io(ctx)
		res, err := w.claims.ClaimAttempts(cctx, reqs, w.holder.String())
		cancel()
		if err == nil {
			return res, true
		}
		w.log.Warn("claim dispatches", logkey.Dispatches, len(reqs), logkey.Try, try+1, logkey.Err, err)
		if clock.Sleep(ctx, backoff(try)) != nil {
			return nil, false
		}
	}
}

// deadLetter sends m to the dead-letter topic with reason, retrying until
// Kafka acknowledges it; false if ctx ended first. Like claim, a call in
// progress is not cut short by ctx.
func (w *Worker) deadLetter(ctx context.Context, prod eventbus.Publisher, m eventbus.Message, reason string) bool {
	for try := 0; ; try++ {
		cctx, cancel := w.io(ctx)
		err := prod.DeadLetter(cctx, m, reason)
		cancel()
		if err == nil {
			w.stats.poison.Add(1)
			w.log.Warn("poison dispatch dead-lettered", logkey.Reason, reason)
			return true
		}
		w.log.Warn("dead-letter dispatch", logkey.Try, try+1, logkey.Err, err)
		if clock.Sleep(ctx, backoff(try)) != nil {
			return false
		}
	}
}

// newAttempt registers a claimed attempt as in flight and arms its
// heartbeats: its first beat is due beatEvery(ttl) after the claim, and only
// then does a goroutine (keepAlive) start for it, so the many attempts that
// end sooner cost a timer, not a goroutine and a ticker. w.beats counts the
// armed timer and then the goroutine; either ends when the attempt leaves
// the in-flight set. Heartbeats do their I/O with ctx's values, not its
// cancellation: a claim taken while fetching is kept alive while the worker
// drains.
func (w *Worker) newAttempt(ctx context.Context, id statestore.Attempt, fp uint64, d *eventsv1.TaskDispatch, h Handler, ttl time.Duration) *attempt {
	a := &attempt{
		id: id, fp: fp, dispatch: d, handler: h, ttl: ttl, logBase: w.log.Handler(),
		logs:  newLogBuffer(w.keys, id, w.cfg.LogLinesCap),
		gone:  make(chan struct{}),
		beats: &w.beats,
	}
	beatCtx := context.WithoutCancel(ctx)
	w.beats.Add(1)
	a.firstBeat = time.AfterFunc(w.beatEvery(ttl), func() {
		defer w.beats.Done()
		w.keepAlive(beatCtx, a)
	})
	w.inflight.add(a) // after firstBeat is set: leave reads it
	return a
}
