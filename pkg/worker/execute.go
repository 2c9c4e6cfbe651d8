package worker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
)

// execute runs one claimed attempt to its end under a context derived from
// ctx (the executors' context): the handler call (with its timeout and panic
// recovery), a RUNNING notice if it takes longer than StartNotice, the log
// flush, then its result queued for publishing — or nothing published if the
// attempt was stopped or handed back.
func (w *Worker) execute(ctx context.Context, a *attempt) {
	ctx, cancel := a.begin(a.withSpan(ctx))
	defer cancel(nil)
	w.stats.executed.Add(1)
	a.mu.Lock()
	a.started = time.Now()
	a.mu.Unlock()
	w.metrics.began(a, a.started)
	noticed := make(chan struct{})
	notice := time.AfterFunc(w.cfg.StartNotice, func() {
		defer close(noticed)
		w.startNotice(ctx, a)
	})
	hctx, endExecute := a.startExecute(ctx)
	out, err := w.call(hctx, a)
	endExecute(err)
	if !notice.Stop() {
		<-noticed // it fired: join its goroutine, so its notice precedes the result
	}
	a.finish()
	finished := time.Now()
	w.conclude(ctx, a, out, err, finished)
	w.metrics.finished(ctx, a, err, finished)
}

// call runs the handler with the attempt's context ctx (plus the dispatch's
// timeout) and turns a panic into a permanent failure.
func (w *Worker) call(ctx context.Context, a *attempt) (out any, err error) {
	task, err := w.task(a)
	if err != nil {
		return nil, Permanent(err)
	}
	hctx := ctx
	if ms := a.dispatch.GetTimeoutMs(); ms > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
		task.Deadline, _ = hctx.Deadline()
	}
	defer func() {
		if r := recover(); r != nil {
			a.log().Error("handler panicked", logkey.Panic, a.mask.str(fmt.Sprint(r)))
			a.logs.add("handler", fmt.Sprintf("panic: %v\n%s", r, debug.Stack()))
			out, err = nil, Permanent(fmt.Errorf("handler panicked: %v", r))
		}
	}()
	out, err = a.handler.Handle(hctx, task)
	if err != nil && ctx.Err() == nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%w after %s: %w", errTimedOut, time.Duration(a.dispatch.GetTimeoutMs())*time.Millisecond, err)
	}
	return out, err
}

// task builds what the handler sees of the attempt: its config with the
// secrets it references filled in, and a log that masks them (as its
// output and error will be).
func (w *Worker) task(a *attempt) (*Task, error) {
	d := a.dispatch
	cfg := d.GetConfig()
	if len(cfg) == 0 {
		cfg = []byte("null")
	}
	cfg, mask, err := fillSecrets(d, cfg, w.cfg.Secrets, w.cfg.ID)
	if err != nil {
		return nil, err
	}
	a.mask = mask
	a.logs.setMask(mask)
	id := a.id
	return &Task{
		RunID: id.Run, Workflow: d.GetWorkflow(), Version: int(d.GetVersion()),
		NodeID: id.Node, Instance: id.Instance, Count: max(int(d.GetCount()), 1), Attempt: id.Attempt,
		Handler: d.GetHandler(), Config: json.RawMessage(cfg),
		IdempotencyKey: cmp.Or(d.GetIdempotencyKey(),
			id.Run+":"+id.Node+":"+strconv.Itoa(id.Instance)+":"+strconv.Itoa(id.Attempt)),
		WorkerID: w.cfg.ID,
		Log:      a.logs.add,
	}, nil
}

// conclude flushes the attempt's logs and queues its result, unless a
// heartbeat stopped it (the orchestrator moved on: nothing to report) or it
// failed because the worker is shutting down (its claim is handed back).
// ctx is the attempt's context, which tells which.
func (w *Worker) conclude(ctx context.Context, a *attempt, out any, err error, finished time.Time) {
	if s, ok := stoppedBy(ctx); ok {
		w.flushLogs(ctx, a)
		w.inflight.remove(a)
		w.stats.stopped.Add(1)
		a.log().InfoContext(ctx, "attempt stopped; its result is not published", logkey.Reason, s.reason.String())
		a.endSpan("stopped", "")
		return
	}
	if err != nil && errors.Is(context.Cause(ctx), errShutdown) {
		w.flushLogs(ctx, a)
		w.handBack(ctx, a)
		return
	}
	res := w.finalResult(ctx, a, out, err, finished)
	w.flushLogs(ctx, a)
	if a.logBase.Enabled(ctx, slog.LevelDebug) {
		a.log().DebugContext(ctx, "attempt finished", logkey.Status, res.GetStatus().String(), logkey.Duration, finished.Sub(a.started), logkey.Err, res.GetError())
	}
	if !w.out.push(outgoing{result: res, final: a, trace: a.spanContext()}) {
		a.log().WarnContext(ctx, "attempt finished after the worker stopped; result not published")
		a.endSpan("unpublished", "the worker stopped before publishing the result")
		w.inflight.remove(a)
	}
}

// startNotice queues a RUNNING result unless the attempt already finished
// or its context ctx ended.
func (w *Worker) startNotice(ctx context.Context, a *attempt) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.finished || ctx.Err() != nil {
		return
	}
	w.out.push(outgoing{result: w.runningResult(a), trace: a.spanContext()})
}

// handBack releases the attempt's claim, then queues a FAILED result
// marked handed_back, on which the orchestrator dispatches the same attempt
// again without counting a failure (if that result is lost, the released
// claim makes the reconciler fail the attempt, and the retry policy
// applies). Idempotent. The release is not cut short by the end of ctx.
func (w *Worker) handBack(ctx context.Context, a *attempt) {
	a.beatMu.Lock()
	defer a.beatMu.Unlock()
	if a.handedBack.Swap(true) {
		return
	}
	ctx, cancel := w.io(ctx)
	defer cancel()
	if err := w.claims.ReleaseClaim(ctx, a.id, w.holder.String()); err != nil {
		a.log().Warn("hand back attempt: its claim will expire instead", logkey.Err, err)
	} else {
		a.log().Info("attempt handed back")
	}
	w.stats.handedBack.Add(1)
	w.inflight.remove(a)
	w.out.push(outgoing{result: w.handedBackResult(a), trace: a.spanContext()})
	a.endSpan("handed back", "")
}

// flushLogs appends the attempt's pending log lines to Redis, even if ctx
// has ended.
func (w *Worker) flushLogs(ctx context.Context, a *attempt) {
	if err := a.logs.flush(ctx, w.rdb, w.io); err != nil {
		a.log().Warn("flush attempt logs", logkey.Err, err)
	}
}
