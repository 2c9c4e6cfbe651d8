package apisvc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/dag/layout"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
)

// layoutView is a workflow version's graph as the UI draws it: every node's
// box and every edge's route, in pixels (layout.Compute).
type layoutView struct {
	Workflow   string           `json:"workflow"`
	Version    int              `json:"version"`
	Width      float64          `json:"width"`
	Height     float64          `json:"height"`
	Layers     int              `json:"layers"`
	NodeWidth  float64          `json:"node_width"`
	NodeHeight float64          `json:"node_height"`
	Nodes      []layoutNodeView `json:"nodes"`
	Edges      []layoutEdgeView `json:"edges"`
}

type layoutNodeView struct {
	ID    string  `json:"id"`
	Layer int     `json:"layer"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
}

type layoutEdgeView struct {
	From   string         `json:"from"`
	To     string         `json:"to"`
	Points []layout.Point `json:"points"`
}

// layoutOptions are the sizes the UI's stylesheet draws nodes at.
var layoutOptions = layout.Options{NodeWidth: 170, NodeHeight: 38, LayerGap: 70, NodeGap: 14}

// layoutCache keeps computed layouts by workflow version (immutable), up
// to defCacheSize of them. Safe for concurrent use.
type layoutCache struct {
	mu sync.Mutex
	m  map[string]*layoutView
}

// workflowLayout answers GET /workflows/{name}/layout?version=N (default:
// the latest version).
func (s *Server) workflowLayout(c *gin.Context) {
	name, v, err := workflowVersionParams(c)
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	lv, err := s.layoutOf(ctx, name, v)
	if err != nil {
		if errors.Is(err, statestore.ErrNotFound) {
			err = errNotFound("no workflow %q version %d", name, v)
		}
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, lv)
}

// layoutOf returns the layout of version v of workflow name (v 0: latest).
func (s *Server) layoutOf(ctx context.Context, name string, v int) (*layoutView, error) {
	if v == 0 {
		_, latest, err := s.keys.GetWorkflow(ctx, s.rdb, name, 0)
		if err != nil {
			return nil, err
		}
		v = latest
	}
	key := name + "@" + strconv.Itoa(v)
	s.layouts.mu.Lock()
	lv := s.layouts.m[key]
	s.layouts.mu.Unlock()
	if lv != nil {
		return lv, nil
	}
	g, err := s.defs.get(ctx, name, v)
	if err != nil {
		return nil, err
	}
	if lv, err = computeLayout(g, name, v); err != nil {
		return nil, err
	}
	s.layouts.mu.Lock()
	if s.layouts.m == nil || len(s.layouts.m) >= defCacheSize {
		s.layouts.m = map[string]*layoutView{}
	}
	s.layouts.m[key] = lv
	s.layouts.mu.Unlock()
	return lv, nil
}

// computeLayout lays out a compiled graph.
func computeLayout(g *dag.Graph, name string, v int) (*layoutView, error) {
	l, err := layout.Compute(len(g.Def.Nodes), g.Parents, layoutOptions)
	if err != nil {
		return nil, fmt.Errorf("lay out workflow %s version %d: %w", name, v, err)
	}
	lv := &layoutView{Workflow: name, Version: v, Width: l.Width, Height: l.Height, Layers: l.Layers,
		NodeWidth: layoutOptions.NodeWidth, NodeHeight: layoutOptions.NodeHeight,
		Nodes: make([]layoutNodeView, len(l.Nodes)), Edges: make([]layoutEdgeView, len(l.Edges))}
	for i, n := range l.Nodes {
		lv.Nodes[i] = layoutNodeView{ID: g.Def.Nodes[n.Index].ID, Layer: n.Layer, X: n.X, Y: n.Y}
	}
	for i, e := range l.Edges {
		lv.Edges[i] = layoutEdgeView{From: g.Def.Nodes[e.From].ID, To: g.Def.Nodes[e.To].ID, Points: e.Points}
	}
	return lv, nil
}
