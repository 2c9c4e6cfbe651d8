package apisvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
)

// taskView is one node instance of a run with its output.
type taskView struct {
	RunID    string `json:"run_id"`
	Node     string `json:"node"`
	Instance int    `json:"instance"`
	// FanOut marks a row that is one instance of a fan-out node (Instance is its index).
	FanOut bool `json:"fan_out,omitempty"`
	apiwire.NodeFields
	Output json.RawMessage `json:"output,omitempty"`
	// OutputCut stands for an output longer than the request's output_max.
	OutputCut *outputCut `json:"output_cut,omitempty"`
	// InstancePage pages through a fan-out node's instances (GET of the node).
	InstancePage *apiwire.Page[taskView] `json:"instance_page,omitempty"`
}

// taskList is a page of a run's tasks.
type taskList struct {
	RunID      string     `json:"run_id"`
	Items      []taskView `json:"items"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// listTasks pages through a run's tasks in definition order: each node,
// followed by its instances when it is a fan-out node. The cursor is an
// offset into that sequence, which the node records' counts describe, so a
// page reads only the instances it shows.
func (s *Server) listTasks(c *gin.Context) {
	id, err := runParam(c)
	var limit int
	var cur *cursor
	if err == nil {
		limit, err = intQuery(c, "limit", 100, 1, statestore.MaxPage)
	}
	if err == nil {
		cur, err = cursorQuery(c, "tasks")
	}
	r, ctx, cancel := s.tasksFor(c, id, err)
	defer cancel()
	if r == nil {
		return
	}
	from := 0
	if cur != nil {
		from = cur.Offset
	}
	now := time.Now()
	items, next, err := s.taskRows(ctx, r, from, limit, now)
	if err != nil {
		abort(c, err)
		return
	}
	out := taskList{RunID: id, Items: items}
	if next > 0 {
		out.NextCursor = cursor{List: "tasks", Offset: next}.encode()
	}
	respond(c, http.StatusOK, out)
}

// taskRows renders up to limit rows of r's task sequence from offset from;
// next is the offset of the following page (0: none).
func (s *Server) taskRows(ctx context.Context, r *loadedRun, from, limit int, now time.Time) (rows []taskView, next int, err error) {
	rows = make([]taskView, 0, min(limit, 64))
	w := r.waitContext(now, nil)
	pos := 0 // offset of the current node's row
	for i, n := range r.graph.Def.Nodes {
		size := 1 + r.nodes[i].Count
		if !r.nodes[i].FanOut {
			size = 1
		}
		switch {
		case len(rows) == limit:
			return rows, pos, nil
		case from >= pos+size:
			pos += size
			continue
		}
		if from <= pos {
			rows = append(rows, r.task(i, w, now))
		}
		if first := max(from-pos-1, 0); size > 1 && len(rows) < limit {
			take := min(size-1-first, limit-len(rows))
			page, err := s.instanceRows(ctx, r, n.ID, first, take, now)
			if err != nil {
				return nil, 0, err
			}
			rows = append(rows, page...)
			if len(rows) == limit && first+take < size-1 {
				return rows, pos + 1 + first + take, nil
			}
		}
		pos += size
	}
	return rows, 0, nil
}

// getTask returns one node with its output (for a fan-out node, the
// assembled array, its instance counts and a page of its instances), or with
// ?instance=N one instance of a fan-out node.
func (s *Server) getTask(c *gin.Context) {
	id, node, err := runNodeParams(c)
	var q taskQuery
	if err == nil {
		q, err = taskQueryOf(c)
	}
	r, ctx, cancel := s.tasksFor(c, id, err)
	defer cancel()
	if r == nil {
		return
	}
	pos, err := r.nodeIndex(node)
	if err != nil {
		abort(c, err)
		return
	}
	now := time.Now()
	t, err := s.taskOf(ctx, r, pos, q, now)
	if err != nil {
		abort(c, err)
		return
	}
	t.cut(q.outputMax)
	if t.InstancePage != nil {
		for i := range t.InstancePage.Items {
			t.InstancePage.Items[i].cut(q.outputMax)
		}
	}
	respond(c, http.StatusOK, t)
}

// taskQuery is getTask's query: one instance, or a page of instances.
type taskQuery struct {
	instance  int // -1: the node itself
	limit     int
	from      int
	outputMax int // 0: outputs whole
}

// outputCut is what a task answer carries instead of an output longer than
// the request's output_max bytes of JSON text: its length and its first
// bytes (cut before a UTF-8 sequence, so at most output_max). The web UI
// shows a fan-out node's output, the array of every instance's, this way
// without downloading megabytes; `braid output` reads it whole.
type outputCut struct {
	Bytes int    `json:"bytes"`
	Head  string `json:"head"`
}

// maxOutputMax bounds output_max: larger than any inline output (256 KiB),
// smaller than the arrays it is there to spare.
const maxOutputMax = 16 << 20

// cut replaces t's output by its head when its JSON text, compacted as the
// answer would send it, is longer than max bytes.
func (t *taskView) cut(max int) {
	if max <= 0 || len(t.Output) <= max {
		return
	}
	var b bytes.Buffer
	if err := json.Compact(&b, t.Output); err == nil {
		t.Output = b.Bytes()
	}
	if len(t.Output) <= max {
		return
	}
	n := max
	for n > 0 && !utf8.RuneStart(t.Output[n]) {
		n--
	}
	t.OutputCut = &outputCut{Bytes: len(t.Output), Head: string(t.Output[:n])}
	t.Output = nil
}

func taskQueryOf(c *gin.Context) (taskQuery, error) {
	q := taskQuery{instance: -1}
	var err error
	if _, ok := c.GetQuery("instance"); ok {
		if q.instance, err = intQuery(c, "instance", 0, 0, math.MaxInt32); err != nil {
			return q, err
		}
	}
	if q.limit, err = intQuery(c, "limit", 50, 1, 500); err != nil {
		return q, err
	}
	if q.outputMax, err = intQuery(c, "output_max", 0, 1, maxOutputMax); err != nil {
		return q, err
	}
	cur, err := cursorQuery(c, "instances")
	if cur != nil {
		q.from = cur.Offset
	}
	return q, err
}

// taskOf renders node pos (or one of its instances) for getTask.
func (s *Server) taskOf(ctx context.Context, r *loadedRun, pos int, q taskQuery, now time.Time) (taskView, error) {
	n, rec := r.graph.Def.Nodes[pos], r.nodes[pos]
	switch {
	case q.instance > 0 && !rec.FanOut || q.instance >= 0 && rec.FanOut && q.instance >= rec.Count:
		return taskView{}, errNotFound("node %q of run %q has no instance %d", n.ID, r.id, q.instance)
	case q.instance >= 0 && rec.FanOut:
		rows, err := s.instanceRows(ctx, r, n.ID, q.instance, 1, now)
		if err != nil {
			return taskView{}, err
		}
		return rows[0], nil
	}
	t := r.task(pos, r.waitContext(now, s.handlerOffers(ctx, now)), now)
	if !rec.FanOut {
		return t, nil
	}
	from := min(q.from, rec.Count)
	take := min(q.limit, rec.Count-from)
	rows, err := s.instanceRows(ctx, r, n.ID, from, take, now)
	if err != nil {
		return taskView{}, err
	}
	t.InstancePage = &apiwire.Page[taskView]{Items: rows}
	if from+take < rec.Count {
		t.InstancePage.NextCursor = cursor{List: "instances", Offset: from + take}.encode()
	}
	return t, nil
}

// task renders node i of r with its output (r read with its outputs: tasksFor).
func (r *loadedRun) task(i int, w waitCtx, now time.Time) taskView {
	n := r.graph.Def.Nodes[i]
	t := taskView{RunID: r.id, Node: n.ID, NodeFields: viewNode(n, r.nodes[i], now)}
	t.WaitingReason = waitingReason(r.graph, i, r.nodes, w)
	t.Instances = countsOf(r.nodes[i])
	if out, ok := r.stored.Outputs[n.ID]; !ok || json.Valid([]byte(out)) {
		t.Output = records.OutputOf(r.nodes[i].State, out, ok)
	}
	return t
}

// instanceRows renders instances [from, from+n) of fan-out node id.
func (s *Server) instanceRows(ctx context.Context, r *loadedRun, id string, from, n int, now time.Time) ([]taskView, error) {
	recs, outs, err := s.keys.InstancePage(ctx, s.rdb, r.id, id, from, n)
	if err != nil {
		return nil, err
	}
	node := r.graph.Def.Nodes[r.graph.Index[id]]
	rows := make([]taskView, len(recs))
	for j := range recs {
		rec := records.NodeRecord{State: records.NodePending}
		if d, err := records.DecodeNodeRecordString(recs[j]); err == nil && d.State != "" {
			rec = d
		}
		rows[j] = taskView{RunID: r.id, Node: id, Instance: from + j, FanOut: true, NodeFields: viewNode(node, rec, now)}
		if outs[j] == "" || json.Valid([]byte(outs[j])) {
			rows[j].Output = records.OutputOf(rec.State, outs[j], outs[j] != "")
		}
	}
	return rows, nil
}

// instanceRecord reads one fan-out instance's record (pending when it has
// not started); 404 when the node has no such instance.
func (s *Server) instanceRecord(ctx context.Context, r *loadedRun, node string, inst int) (records.NodeRecord, error) {
	if c := r.record(node).Count; inst >= c {
		return records.NodeRecord{}, errNotFound("node %q of run %q has no instance %d (it has %d)", node, r.id, inst, c)
	}
	raw, err := s.rdb.HGet(ctx, s.keys.Instances(r.id, node), statestore.InstanceField(inst)).Result()
	if errors.Is(err, redis.Nil) {
		return records.NodeRecord{State: records.NodePending}, nil
	}
	if err != nil {
		return records.NodeRecord{}, fmt.Errorf("read instance run=%s node=%s instance=%d: %w", r.id, node, inst, err)
	}
	return records.DecodeNodeRecordString(raw)
}
