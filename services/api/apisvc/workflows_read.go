package apisvc

import (
	"context"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
)

// versionList lists a workflow's versions.
type versionList struct {
	Name          string        `json:"name"`
	LatestVersion int           `json:"latest_version"`
	Versions      []versionItem `json:"versions"`
}

type versionItem struct {
	Version int `json:"version"`
}

// listWorkflows pages through registered workflows, newest first.
func (s *Server) listWorkflows(c *gin.Context) {
	limit, err := limitQuery(c)
	if err != nil {
		abort(c, err)
		return
	}
	cur, err := cursorQuery(c, "workflows")
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	page, err := statestore.PageSorted(ctx, s.rdb, s.keys.Workflows(), cur.after(), limit, true)
	if err != nil {
		abort(c, err)
		return
	}
	names := make([]string, len(page))
	for i, z := range page {
		names[i] = z.Member.(string)
	}
	infos, err := s.keys.WorkflowInfos(ctx, s.rdb, names...)
	if err != nil {
		abort(c, err)
		return
	}
	out := apiwire.Page[apiwire.WorkflowSummary]{Items: make([]apiwire.WorkflowSummary, 0, len(infos))}
	for _, w := range infos {
		if w.Latest > 0 && !w.Deleted {
			out.Items = append(out.Items, apiwire.WorkflowSummary{Name: w.Name, LatestVersion: w.Latest,
				CreatedAt: apiwire.At(w.Created), UpdatedAt: apiwire.At(w.Updated)})
		}
	}
	if len(page) == limit {
		last := page[len(page)-1]
		out.NextCursor = cursor{List: "workflows", Score: last.Score, Member: last.Member.(string)}.encode()
	}
	respond(c, http.StatusOK, out)
}

// getWorkflow returns the latest version of a workflow, or ?version=N.
func (s *Server) getWorkflow(c *gin.Context) {
	name, v, err := workflowVersionParams(c)
	if err != nil {
		abort(c, err)
		return
	}
	s.showVersion(c, name, v)
}

// versionQuery parses ?version= (0 when absent: the latest).
func versionQuery(c *gin.Context) (int, error) { return intQuery(c, "version", 0, 1, math.MaxInt32) }

// workflowVersions lists a workflow's versions, or shows ?version=N.
func (s *Server) workflowVersions(c *gin.Context) {
	name, v, err := workflowVersionParams(c)
	if err != nil {
		abort(c, err)
		return
	}
	if v > 0 {
		s.showVersion(c, name, v)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	info, err := s.liveWorkflow(ctx, name)
	if err != nil {
		abort(c, err)
		return
	}
	vs, err := s.keys.WorkflowVersionNumbers(ctx, s.rdb, name)
	if err != nil {
		abort(c, err)
		return
	}
	out := versionList{Name: name, LatestVersion: info.Latest, Versions: make([]versionItem, len(vs))}
	for i, n := range vs {
		out.Versions[i] = versionItem{Version: n}
	}
	respond(c, http.StatusOK, out)
}

// showVersion writes version v (0: latest) of a live workflow.
func (s *Server) showVersion(c *gin.Context, name string, v int) {
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	info, err := s.liveWorkflow(ctx, name)
	if err != nil {
		abort(c, err)
		return
	}
	def, ver, err := s.keys.GetWorkflow(ctx, s.rdb, name, v)
	if errors.Is(err, statestore.ErrNotFound) {
		abort(c, errNotFound("workflow %q has no version %d; its latest is %d", name, v, info.Latest))
		return
	}
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, apiwire.WorkflowDoc{Name: name, Version: ver, CreatedAt: apiwire.At(info.Created),
		UpdatedAt: apiwire.At(info.Updated), Definition: def})
}

// deleteWorkflow removes a workflow from the index and refuses new runs of
// it; runs already started keep their pinned version: 204.
func (s *Server) deleteWorkflow(c *gin.Context) {
	name, err := nameParam(c)
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	err = s.keys.DeleteWorkflow(ctx, s.rdb, name, time.Now())
	s.latest.drop(name)
	if errors.Is(err, statestore.ErrNotFound) {
		abort(c, errNotFound("workflow %q not found", name))
		return
	}
	if err != nil {
		abort(c, err)
		return
	}
	s.log.Info("workflow deleted", logkey.Workflow, name, logkey.KeyName, requester(c))
	c.Status(http.StatusNoContent)
}

// liveWorkflow returns a workflow's metadata; 404 when missing or deleted.
func (s *Server) liveWorkflow(ctx context.Context, name string) (statestore.WorkflowInfo, error) {
	info, err := s.keys.LiveWorkflow(ctx, s.rdb, name)
	if errors.Is(err, statestore.ErrNotFound) {
		return info, errNotFound("workflow %q not found", name)
	}
	return info, err
}
