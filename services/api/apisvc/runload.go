package apisvc

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
)

// loadedRun is a run read from Redis with its compiled definition.
type loadedRun struct {
	id     string
	stored statestore.StoredRun
	graph  *dag.Graph
	// nodes holds each definition node's instance-0 record by position;
	// a node without a record (the run has not started) is pending.
	nodes []records.NodeRecord
}

// loadRun reads run id as a view of it needs it — without its outputs,
// which can be large — and compiles its pinned version; 404 when unknown.
func (s *Server) loadRun(ctx context.Context, id string) (*loadedRun, error) {
	return s.readRun(ctx, id, s.keys.LoadRunView)
}

// loadRunWithOutputs is loadRun with the run's outputs, which task views
// show (task).
func (s *Server) loadRunWithOutputs(ctx context.Context, id string) (*loadedRun, error) {
	return s.readRun(ctx, id, s.keys.LoadRun)
}

func (s *Server) readRun(ctx context.Context, id string, read func(context.Context, redis.Cmdable, string) (statestore.StoredRun, error)) (*loadedRun, error) {
	st, err := read(ctx, s.rdb, id)
	if err != nil {
		return nil, err
	}
	if !st.Exists() {
		return nil, errNotFound("run %q not found", id)
	}
	return s.compileRun(ctx, id, st)
}

// compileRun pairs a stored run with its pinned version's compiled graph.
func (s *Server) compileRun(ctx context.Context, id string, st statestore.StoredRun) (*loadedRun, error) {
	ver, _ := strconv.Atoi(st.Fields[records.FieldVersion])
	g, err := s.defs.get(ctx, st.Fields[records.FieldWorkflow], ver)
	if err != nil {
		return nil, err
	}
	r := &loadedRun{id: id, stored: st, graph: g, nodes: make([]records.NodeRecord, len(g.Def.Nodes))}
	for i, n := range g.Def.Nodes {
		r.nodes[i] = r.record(n.ID)
	}
	return r, nil
}

// runFor is the preamble of a handler under /runs/{id}: it answers
// parseErr, the problem its path or query parameters had, if there is one;
// else it loads run id under a context bounded by RequestTimeout and
// answers why it cannot (404 unknown run, 503 Redis). r is nil when it
// answered. cancel is never nil: the caller defers it.
func (s *Server) runFor(c *gin.Context, id string, parseErr error) (r *loadedRun, ctx context.Context, cancel context.CancelFunc) {
	return s.runForWith(c, id, parseErr, s.loadRun)
}

// tasksFor is runFor for the task views: the run is read with its outputs.
func (s *Server) tasksFor(c *gin.Context, id string, parseErr error) (r *loadedRun, ctx context.Context, cancel context.CancelFunc) {
	return s.runForWith(c, id, parseErr, s.loadRunWithOutputs)
}

func (s *Server) runForWith(c *gin.Context, id string, parseErr error, load func(context.Context, string) (*loadedRun, error)) (r *loadedRun, ctx context.Context, cancel context.CancelFunc) {
	ctx, cancel = s.requestCtx(c)
	err := parseErr
	if err == nil {
		r, err = load(ctx, id)
	}
	if err != nil {
		abort(c, err)
	}
	return r, ctx, cancel
}

// record decodes the record of a node instance field; a missing or
// unreadable record reads as pending.
func (r *loadedRun) record(field string) records.NodeRecord {
	raw, ok := r.stored.Nodes[field]
	if !ok {
		return records.NodeRecord{State: records.NodePending}
	}
	rec, err := records.DecodeNodeRecordString(raw)
	if err != nil || rec.State == "" {
		return records.NodeRecord{State: records.NodePending}
	}
	return rec
}

// field returns a run hash field.
func (r *loadedRun) field(name string) string { return r.stored.Fields[name] }

// status is the run's status.
func (r *loadedRun) status() records.RunStatus {
	return records.RunStatus(r.field(records.FieldStatus))
}

// seq is the sequence number of the run's last published event.
func (r *loadedRun) seq() uint64 {
	n, _ := strconv.ParseUint(r.field(records.FieldSeq), 10, 64)
	return n
}

// nodeIndex returns the position of node id, 404 when the run has none.
func (r *loadedRun) nodeIndex(id string) (int, error) {
	i, ok := r.graph.Index[id]
	if !ok {
		return 0, errNotFound("run %q (workflow %s) has no node %q", r.id, r.field(records.FieldWorkflow), id)
	}
	return i, nil
}

// input returns the run input as JSON (null when unreadable).
func (r *loadedRun) input() json.RawMessage {
	in := r.field(records.FieldInput)
	if !json.Valid([]byte(in)) {
		return json.RawMessage("null")
	}
	return json.RawMessage(in)
}

// waitContext gathers what waiting reasons depend on.
func (r *loadedRun) waitContext(now time.Time, offers func(string) bool) waitCtx {
	return waitCtx{status: r.status(), started: r.stored.Started(), paused: r.field(records.FieldPaused) == "1", now: now, offers: offers}
}
