package statestore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/records"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
)

// PendingRun is a run the api records before it asks the orchestrator to
// start it, so that the run can be read back at once.
type PendingRun struct {
	ID          string
	Workflow    string
	Version     int
	Input       []byte // JSON object
	Created     time.Time
	RequestedBy string // the name of the api key that asked; never the key
	// Capped says the workflow has a concurrency cap: the run also joins the
	// workflow's admission queue, so runs are admitted in request order.
	Capped bool
	// TraceParent is the W3C traceparent of the span that requested the
	// run ("" when tracing is off): stored as records.FieldTrace, it lets
	// the orchestrator put events that carry no trace context of their own
	// (timers, reconciles) into the run's trace.
	TraceParent string
}

// createPendingScript writes a pending run hash unless the run exists.
//
//	KEYS[1] run hash  ARGV field, value pairs
//	returns 1 written, 0 the run already exists (pending or started)
var createPendingScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`)

// CreatePendingRun writes p's run hash with status "pending" and adds it to
// the AllRuns, WorkflowRuns and ActiveRuns indexes (score: Created in ms),
// unless a run with p's id already exists: then it writes nothing and
// reports created false, so requesting a run under a derived id (a
// schedule's fire) twice never resets a run that has started. The
// orchestrator's first write of the run (RunWrite.Create) accepts such a
// record and overwrites its fields.
//
// The record and its index entries go in one pipelined round trip: the
// indexes live outside the run's hash slot, so they cannot join the
// script, and are added with ZADD NX beside it. When the run existed, the
// entries that NX added (an ended run is no longer active) are removed
// again, so an existing run's indexes end as they were. The script is sent
// whole (EVAL): it is short, and a pipeline cannot fall back from NOSCRIPT
// the way Script.Run does. A capped run joins
// its workflow's admission queue only once the record is known to be new.
func (k Keys) CreatePendingRun(ctx context.Context, rdb redis.Cmdable, p PendingRun) (created bool, err error) {
	created, _, err = k.createPending(ctx, rdb, p, false)
	return created, err
}

// ErrNotLatest says a run was asked for a workflow version that is not the
// workflow's live latest one (a newer version was registered, or the
// workflow was deleted) by the time its record would be written.
var ErrNotLatest = errors.New("not the workflow's latest version")

// CreatePendingRunOfLatest is CreatePendingRun for a run of the version
// the caller believes is its workflow's latest (from a cache): the
// workflow's metadata is read in the same pipeline, just before the record
// is written. When p.Version is not the live latest version, the record
// and the index entries just added are removed again (the start request
// was not sent, so nobody can have seen the run) and the error wraps
// ErrNotLatest, with the metadata read returned so the caller can check
// the input against the right version and ask again. Otherwise it costs
// what CreatePendingRun costs: one round trip, the lookup included.
func (k Keys) CreatePendingRunOfLatest(ctx context.Context, rdb redis.Cmdable, p PendingRun) (created bool, info WorkflowInfo, err error) {
	return k.createPending(ctx, rdb, p, true)
}

func (k Keys) createPending(ctx context.Context, rdb redis.Cmdable, p PendingRun, checkLatest bool) (bool, WorkflowInfo, error) {
	ms := p.Created.UnixMilli()
	z := redis.Z{Score: float64(ms), Member: p.ID}
	indexes := []string{k.AllRunsOf(p.ID), k.WorkflowRunsOf(p.Workflow, p.ID), k.ActiveRunsOf(p.ID)}
	pipe := rdb.Pipeline()
	var meta *redis.MapStringStringCmd
	if checkLatest {
		meta = pipe.HGetAll(ctx, k.WorkflowMeta(p.Workflow))
	}
	fields := []any{records.FieldWorkflow, p.Workflow, records.FieldVersion, strconv.Itoa(p.Version), records.FieldStatus, "pending",
		records.FieldInput, string(p.Input), records.FieldCreated, strconv.FormatInt(ms, 10), records.FieldRequestedBy, p.RequestedBy}
	if p.TraceParent != "" {
		fields = append(fields, records.FieldTrace, p.TraceParent)
	}
	script := createPendingScript.Eval(ctx, pipe, []string{k.Run(p.ID)}, fields...)
	added := make([]*redis.IntCmd, len(indexes))
	for i, idx := range indexes {
		added[i] = pipe.ZAddNX(ctx, idx, z)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return false, WorkflowInfo{}, fmt.Errorf("create pending run %s workflow=%s: %w", p.ID, p.Workflow, err)
	}
	if n, _ := script.Int(); n == 0 {
		return false, WorkflowInfo{}, k.unindexAdded(ctx, rdb, p.ID, indexes, added)
	}
	var info WorkflowInfo
	if checkLatest {
		info = workflowInfoOf(p.Workflow, meta.Val())
		if info.Latest != p.Version || info.Deleted {
			return false, info, k.undoPending(ctx, rdb, p, indexes, added, info)
		}
	}
	if p.Capped {
		if err := rdb.ZAddNX(ctx, k.AdmitQueue(p.Workflow), z).Err(); err != nil {
			return true, info, fmt.Errorf("queue pending run %s workflow=%s for admission: %w", p.ID, p.Workflow, err)
		}
	}
	return true, info, nil
}

// undoPending removes a pending record written for a version that turned
// out not to be the latest, and the index entries written with it; the
// error wraps ErrNotLatest unless the undo itself failed.
func (k Keys) undoPending(ctx context.Context, rdb redis.Cmdable, p PendingRun, indexes []string, added []*redis.IntCmd, info WorkflowInfo) error {
	if err := deletePendingScript.Run(ctx, rdb, []string{k.Run(p.ID), k.Nodes(p.ID)}).Err(); err != nil {
		return fmt.Errorf("undo pending run %s of workflow %s version %d: %w", p.ID, p.Workflow, p.Version, err)
	}
	if err := k.unindexAdded(ctx, rdb, p.ID, indexes, added); err != nil {
		return err
	}
	return fmt.Errorf("run %s of workflow %s version %d (live latest %d, deleted %t): %w",
		p.ID, p.Workflow, p.Version, info.Latest, info.Deleted, ErrNotLatest)
}

// unindexAdded removes run from the indexes whose ZADD NX added it.
func (k Keys) unindexAdded(ctx context.Context, rdb redis.Cmdable, run string, indexes []string, added []*redis.IntCmd) error {
	pipe := rdb.Pipeline()
	for i, c := range added {
		if c.Val() == 1 {
			pipe.ZRem(ctx, indexes[i], run)
		}
	}
	if pipe.Len() == 0 {
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("unindex existing run %s: %w", run, err)
	}
	return nil
}

// StartRequest is the workflow.start message that asks the orchestrator to
// start p (the api and the scheduler both send it after CreatePendingRun).
func (p PendingRun) StartRequest() *eventsv1.RunStartRequested {
	return &eventsv1.RunStartRequested{
		RunId: p.ID, Workflow: p.Workflow, Version: int32(p.Version), Input: p.Input,
		RequestedAtMs: p.Created.UnixMilli(), RequestedBy: p.RequestedBy,
	}
}

// deletePendingScript deletes a run hash unless the orchestrator started the run.
//
//	KEYS[1] run hash  KEYS[2] nodes hash
//	returns 1 deleted (or already gone), 0 kept because the run has started
var deletePendingScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('DEL', KEYS[1])
return 1
`)

// ErrRunStarted is returned by DeletePendingRun for a run the orchestrator
// has already started: it is kept.
var ErrRunStarted = errors.New("run already started")

// DeletePendingRun undoes CreatePendingRun (when the start request could not
// be published), unless the orchestrator has started the run after all.
func (k Keys) DeletePendingRun(ctx context.Context, rdb redis.Cmdable, id, workflow string) error {
	n, err := deletePendingScript.Run(ctx, rdb, []string{k.Run(id), k.Nodes(id)}).Int()
	if err != nil {
		return fmt.Errorf("delete pending run %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("delete pending run %s: %w", id, ErrRunStarted)
	}
	pipe := rdb.Pipeline()
	pipe.ZRem(ctx, k.AllRunsOf(id), id)
	pipe.ZRem(ctx, k.WorkflowRunsOf(workflow, id), id)
	pipe.ZRem(ctx, k.ActiveRunsOf(id), id)
	pipe.ZRem(ctx, k.AdmitQueue(workflow), id)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("unindex pending run %s: %w", id, err)
	}
	return nil
}

// RunSummaryFields are the run hash fields RunSummaries reads (not the input).
var RunSummaryFields = []string{
	records.FieldWorkflow, records.FieldVersion, records.FieldStatus, records.FieldCreated, records.FieldStarted, records.FieldFinished, records.FieldError, records.FieldRequestedBy, records.FieldPaused, records.FieldHeld,
}

// RunSummaries reads RunSummaryFields of each run in one round trip; a run
// that does not exist comes back as an empty map.
func (k Keys) RunSummaries(ctx context.Context, rdb redis.Cmdable, ids ...string) ([]map[string]string, error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HMGet(ctx, k.Run(id), RunSummaryFields...)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read %d runs: %w", len(ids), err)
	}
	out := make([]map[string]string, len(ids))
	for i, c := range cmds {
		m := make(map[string]string, len(RunSummaryFields))
		for j, v := range c.Val() {
			if s, ok := v.(string); ok {
				m[RunSummaryFields[j]] = s
			}
		}
		out[i] = m
	}
	return out, nil
}
