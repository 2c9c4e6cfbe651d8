package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/braidhq/braid/pkg/clock"
	"github.com/braidhq/braid/pkg/logkey"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// blobTries bounds the attempts to store a large output.
const blobTries = 3

// baseResult fills the ids, worker and start time of a's results.
func (w *Worker) baseResult(a *attempt) *eventsv1.TaskResult {
	return &eventsv1.TaskResult{
		RunId: a.id.Run, NodeId: a.id.Node, Instance: int32(a.id.Instance), Attempt: int32(a.id.Attempt),
		WorkerId: w.cfg.ID, StartedAtMs: a.started.UnixMilli(),
	}
}

// runningResult is the start notice of a (call with a.mu held).
func (w *Worker) runningResult(a *attempt) *eventsv1.TaskResult {
	r := w.baseResult(a)
	r.Status = eventsv1.TaskStatus_TASK_STATUS_RUNNING
	return r
}

// handedBackResult tells the orchestrator that a was given back unfinished.
func (w *Worker) handedBackResult(a *attempt) *eventsv1.TaskResult {
	a.mu.Lock()
	r := w.baseResult(a)
	a.mu.Unlock()
	r.Status, r.HandedBack, r.FinishedAtMs = eventsv1.TaskStatus_TASK_STATUS_FAILED, true, time.Now().UnixMilli()
	r.Error = fmt.Sprintf("worker %s shutting down: attempt handed back unfinished", w.cfg.ID)
	return r
}

// finalResult turns the handler's return values into a's result: SUCCEEDED
// with the output as JSON, or FAILED with the error, its permanence and the
// output when the handler returned one. A large output is stored in Redis
// and referenced (with ctx's values, even if ctx has ended).
func (w *Worker) finalResult(ctx context.Context, a *attempt, out any, herr error, finished time.Time) *eventsv1.TaskResult {
	r := w.baseResult(a)
	r.FinishedAtMs = finished.UnixMilli()
	if herr == nil {
		b, err := json.Marshal(out)
		if err != nil {
			r.Status, r.Permanent = eventsv1.TaskStatus_TASK_STATUS_FAILED, true
			r.Error = fmt.Sprintf("marshal output of handler %q: %v", a.dispatch.GetHandler(), err)
			return r
		}
		r.Status = eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED
		if err := w.attachOutput(ctx, a, r, a.mask.jsonBytes(b)); err != nil {
			r.Status, r.Error = eventsv1.TaskStatus_TASK_STATUS_FAILED, err.Error()
		}
		return r
	}
	r.Status, r.Permanent = eventsv1.TaskStatus_TASK_STATUS_FAILED, IsPermanent(herr)
	r.Error = a.mask.str(herr.Error())
	if r.Error == "" {
		r.Error = fmt.Sprintf("handler %q failed without a message", a.dispatch.GetHandler())
	}
	if out != nil {
		if b, err := json.Marshal(out); err == nil {
			_ = w.attachOutput(ctx, a, r, a.mask.jsonBytes(b)) // the handler's error matters more; attachOutput logged
		}
	}
	return r
}

// attachOutput puts out in r, or — when it is larger than MaxInlineOutput —
// stores it under Keys.Blob and sets r.OutputRef to that key. The error says
// the output could not be stored (a retryable failure). Neither the calls
// nor the pauses between them are cut short by the end of ctx.
func (w *Worker) attachOutput(ctx context.Context, a *attempt, r *eventsv1.TaskResult, out []byte) error {
	if len(out) <= w.cfg.MaxInlineOutput {
		r.Output = out
		return nil
	}
	key := w.keys.Blob(a.id.Run, a.id.Node, a.id.Instance, a.id.Attempt)
	var err error
	for try := range blobTries {
		sctx, cancel := w.io(ctx)
		err = w.rdb.Set(sctx, key, out, 0).Err()
		cancel()
		if err == nil {
			r.OutputRef = key
			return nil
		}
		if try < blobTries-1 {
			_ = clock.Sleep(context.WithoutCancel(ctx), backoff(try))
		}
	}
	a.log().Warn("store large output", logkey.Bytes, len(out), logkey.Err, err)
	return fmt.Errorf("store output of %d bytes for %s: %w", len(out), a.id, err)
}

// unencodable is the result published in place of r when r cannot be
// encoded: a permanent failure of r's attempt saying why (a RUNNING notice
// stays one, without its figures).
func unencodable(r *eventsv1.TaskResult, err error) *eventsv1.TaskResult {
	out := &eventsv1.TaskResult{RunId: r.GetRunId(), NodeId: r.GetNodeId(), Instance: r.GetInstance(), Attempt: r.GetAttempt(),
		WorkerId: strings.ToValidUTF8(r.GetWorkerId(), "\uFFFD"), Status: r.GetStatus(), StartedAtMs: r.GetStartedAtMs(), FinishedAtMs: r.GetFinishedAtMs()}
	if out.Status != eventsv1.TaskStatus_TASK_STATUS_RUNNING {
		out.Status, out.Permanent = eventsv1.TaskStatus_TASK_STATUS_FAILED, true
		out.Error = "the task's result could not be encoded: " + strings.ToValidUTF8(err.Error(), "\uFFFD")
	}
	return out
}
