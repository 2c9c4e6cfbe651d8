package apisvc

import (
	"cmp"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
)

// taskView is one node instance of a run with its output.
type taskView struct {
	RunID    string `json:"run_id"`
	Node     string `json:"node"`
	Instance int    `json:"instance"`
	nodeFields
	Output json.RawMessage `json:"output,omitempty"`
}

// nodeFields are the node view fields a task shares (without id and edges).
type nodeFields struct {
	Handler       string `json:"handler"`
	State         string `json:"state"`
	Attempt       int    `json:"attempt"`
	QueuedAt      string `json:"queued_at,omitempty"`
	StartedAt     string `json:"started_at,omitempty"`
	FinishedAt    string `json:"finished_at,omitempty"`
	DurationMs    *int64 `json:"duration_ms,omitempty"`
	Worker        string `json:"worker,omitempty"`
	Error         string `json:"error,omitempty"`
	Reason        string `json:"reason,omitempty"`
	RetryAt       string `json:"retry_at,omitempty"`
	WaitingReason string `json:"waiting_reason,omitempty"`
}

// taskList is a page of a run's tasks.
type taskList struct {
	RunID      string     `json:"run_id"`
	Items      []taskView `json:"items"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// instanceRef locates one node instance of a run.
type instanceRef struct {
	pos  int // node position in the definition
	inst int
}

// listTasks pages through a run's node instances in definition order, with
// outputs and worker ids.
func (s *Server) listTasks(c *gin.Context) {
	id, err := runParam(c)
	if err != nil {
		abort(c, err)
		return
	}
	limit, err := intQuery(c, "limit", 100, 1, statestore.MaxPage)
	if err != nil {
		abort(c, err)
		return
	}
	cur, err := cursorQuery(c, "tasks")
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	r, err := s.loadRun(ctx, id)
	if err != nil {
		abort(c, err)
		return
	}
	refs := r.instances()
	from := 0
	if cur != nil {
		from = min(cur.Offset, len(refs))
	}
	to := min(from+limit, len(refs))
	now := time.Now()
	out := taskList{RunID: id, Items: make([]taskView, 0, to-from)}
	for _, ref := range refs[from:to] {
		out.Items = append(out.Items, r.task(ref, r.waitContext(now, nil), now))
	}
	if to < len(refs) {
		out.NextCursor = cursor{List: "tasks", Offset: to}.encode()
	}
	respond(c, http.StatusOK, out)
}

// getTask returns one node instance (?instance=N, default 0) with its output.
func (s *Server) getTask(c *gin.Context) {
	id, err := runParam(c)
	if err != nil {
		abort(c, err)
		return
	}
	node, err := nodeParam(c)
	if err != nil {
		abort(c, err)
		return
	}
	inst, err := intQuery(c, "instance", 0, 0, math.MaxInt32)
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	r, err := s.loadRun(ctx, id)
	if err != nil {
		abort(c, err)
		return
	}
	pos, err := r.nodeIndex(node)
	if err != nil {
		abort(c, err)
		return
	}
	if _, ok := r.stored.Nodes[statestore.NodeField(node, inst)]; inst > 0 && !ok {
		abort(c, errNotFound("node %q of run %q has no instance %d", node, id, inst))
		return
	}
	now := time.Now()
	respond(c, http.StatusOK, r.task(instanceRef{pos, inst}, r.waitContext(now, s.handlerOffers(ctx, now)), now))
}

// instances lists every node instance: each definition node (instance 0)
// and every fan-out instance found in the nodes hash, in definition order.
func (r *loadedRun) instances() []instanceRef {
	refs := make([]instanceRef, 0, len(r.graph.Def.Nodes))
	for i := range r.graph.Def.Nodes {
		refs = append(refs, instanceRef{pos: i})
	}
	for f := range r.stored.Nodes {
		node, inst := statestore.ParseNodeField(f)
		if pos, ok := r.graph.Index[node]; ok && inst > 0 {
			refs = append(refs, instanceRef{pos, inst})
		}
	}
	slices.SortFunc(refs, func(a, b instanceRef) int { return cmp.Or(a.pos-b.pos, a.inst-b.inst) })
	return refs
}

// task renders one instance with its output.
func (r *loadedRun) task(ref instanceRef, w waitCtx, now time.Time) taskView {
	n := r.graph.Def.Nodes[ref.pos]
	field := statestore.NodeField(n.ID, ref.inst)
	t := taskView{RunID: r.id, Node: n.ID, Instance: ref.inst, nodeFields: viewNode(n.Handler, r.record(field), now)}
	if ref.inst == 0 {
		t.WaitingReason = waitingReason(r.graph, ref.pos, r.nodes, w)
	}
	if out, ok := r.stored.Outputs[field]; ok && json.Valid([]byte(out)) {
		t.Output = json.RawMessage(out)
	}
	return t
}
