package orchsvc

import (
	"context"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/schedule"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/tracing"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// fire requests the run of schedule def for fire time at, of the
// workflow's latest version, and returns its run id. The run is recorded as
// pending unless it exists (a repeated fire), then RunStartRequested is
// published — again for a repeated fire, since the first request may have
// died before it was sent; the orchestrator ignores a second start. If
// publishing fails, the pending record this call wrote is removed and the
// error returned, so the next poll tries again.
func (sc *scheduler) fire(ctx context.Context, def statestore.ScheduleDef, at, now time.Time) (string, error) {
	ctx, span := traceFire(ctx, def.ID, def.Workflow)
	defer span.End()
	info, err := sc.keys.LiveWorkflow(ctx, sc.rdb, def.Workflow)
	if err != nil {
		return "", err
	}
	p := statestore.PendingRun{ID: schedule.RunID(def.ID, at), Workflow: def.Workflow, Version: info.Latest,
		Input: def.Input, Created: now, RequestedBy: "schedule:" + def.ID, TraceParent: tracing.Traceparent(ctx)}
	created, err := sc.keys.CreatePendingRun(ctx, sc.rdb, p)
	if err != nil {
		return "", err
	}
	msg, err := eventbus.NewMessage(eventsv1.TopicWorkflowStart, p.ID, p.StartRequest())
	if err == nil {
		tracing.Inject(ctx, &msg.Headers)
		err = sc.pub.Publish(ctx, msg)
	}
	if err != nil {
		if created {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if derr := sc.keys.DeletePendingRun(cctx, sc.rdb, p.ID, p.Workflow); derr != nil {
				sc.log.Warn("undo pending run", logkey.RunID, p.ID, logkey.Err, derr)
			}
		}
		return "", fmt.Errorf("request run %s of schedule %s: %w", p.ID, def.ID, err)
	}
	span.SetAttributes(tracing.AttrRunID.String(p.ID))
	sc.log.InfoContext(ctx, "schedule fired", logkey.ScheduleID, def.ID, logkey.RunID, p.ID, logkey.Workflow, def.Workflow,
		logkey.Version, p.Version, logkey.FireAt, at, logkey.Repeated, !created)
	return p.ID, nil
}
