package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// settle makes one dispatch durable: it dead-letters a poison message, drops
// a dispatch whose claim is refused, fails one with no handler, or returns
// the claimed attempt to execute. Redis and Kafka errors are retried with
// backoff; ok is false only if ctx ended before the message was settled.
//
// The claim is the durable effect of a dispatch: once it is stored the
// message may be committed, because if this worker dies the claim expires and
// the orchestrator's reconciler retries the attempt.
func (w *Worker) settle(ctx context.Context, prod *eventbus.Producer, m eventbus.Message) (a *attempt, ok bool) {
	d := &eventsv1.TaskDispatch{}
	if err := eventbus.Decode(m, d); err != nil {
		return nil, w.deadLetter(ctx, prod, m, err.Error())
	}
	if err := checkDispatch(d); err != nil {
		return nil, w.deadLetter(ctx, prod, m, err.Error())
	}
	id := statestore.Attempt{Run: d.GetRunId(), Node: d.GetNodeId(), Instance: int(d.GetInstance()), Attempt: int(d.GetAttempt())}
	log := w.log.With(keyRun, id.Run, keyNode, id.Node, keyInstance, id.Instance, keyAttempt, id.Attempt, keyHandler, d.GetHandler())
	if w.recent.has(id) {
		w.stats.dropped.Add(1)
		log.Debug("dispatch dropped: this worker already claimed the attempt")
		return nil, true
	}
	ttl := heartbeatTimeout(d)
	res, ok := w.claim(ctx, id, ttl)
	if !ok {
		return nil, false
	}
	if res != statestore.ClaimOK {
		w.stats.dropped.Add(1)
		log.Debug("dispatch dropped", "claim", res.String())
		return nil, true
	}
	w.recent.add(id)
	h, found := w.cfg.Handlers[d.GetHandler()]
	if !found {
		w.stats.noHandler.Add(1)
		log.Warn("no handler for dispatch")
		w.out.push(outgoing{result: w.noHandlerResult(d)})
		return nil, true
	}
	return w.newAttempt(id, d, h, ttl, log), true
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

// claim runs ClaimAttempt until Redis answers; false if ctx ended first. The
// call itself is not cancelled by ctx, so a claim that was stored is also
// known to be ours.
func (w *Worker) claim(ctx context.Context, id statestore.Attempt, ttl time.Duration) (statestore.ClaimResult, bool) {
	for try := 0; ; try++ {
		cctx, cancel := w.io()
		res, err := w.keys.ClaimAttempt(cctx, w.rdb, id, w.cfg.ID, ttl)
		cancel()
		if err == nil {
			return res, true
		}
		w.log.Warn("claim dispatch", "try", try+1, keyErr, err)
		if !sleepCtx(ctx, backoff(try)) {
			return statestore.ClaimTaken, false
		}
	}
}

// deadLetter sends m to the dead-letter topic with reason, retrying until
// Kafka acknowledges it; false if ctx ended first. Like claim, a call in
// progress is not cut short by ctx.
func (w *Worker) deadLetter(ctx context.Context, prod *eventbus.Producer, m eventbus.Message, reason string) bool {
	for try := 0; ; try++ {
		cctx, cancel := w.io()
		err := prod.DeadLetter(cctx, m, reason)
		cancel()
		if err == nil {
			w.stats.poison.Add(1)
			w.log.Warn("poison dispatch dead-lettered", "reason", reason)
			return true
		}
		w.log.Warn("dead-letter dispatch", "try", try+1, keyErr, err)
		if !sleepCtx(ctx, backoff(try)) {
			return false
		}
	}
}

// newAttempt registers a claimed attempt as in flight.
func (w *Worker) newAttempt(id statestore.Attempt, d *eventsv1.TaskDispatch, h Handler, ttl time.Duration, log *slog.Logger) *attempt {
	ctx, cancel := context.WithCancelCause(w.execCtx)
	a := &attempt{
		id: id, dispatch: d, handler: h, ttl: ttl, log: log,
		logs: newLogBuffer(w.keys.Logs(id.Run, id.Node, id.Instance, id.Attempt), w.cfg.LogLinesCap),
		ctx:  ctx, cancel: cancel, gone: make(chan struct{}),
	}
	w.inflight.add(a)
	go w.keepAlive(w.maintCtx, a)
	return a
}
