package apisvc

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
)

// runScanMax bounds how many index entries one page reads; a filtered page
// that found too few matches among them ends early with a next_cursor.
const runScanMax = 10000

// runScanBatch is how many index entries a page filtered by status reads
// at a time (at least its limit): a status most runs are not in (failed,
// say) is looked for among the latest runScanMax runs in 40 batches, not
// in runScanMax / limit of them.
const runScanBatch = 250

// runStatuses are the accepted ?status= values.
var runStatuses = []records.RunStatus{
	records.RunPending, records.RunRunning, records.RunSucceeded,
	records.RunFailed, records.RunCancelling, records.RunCancelled,
}

// runFilter is the parsed query of GET /runs.
type runFilter struct {
	workflow string
	statuses []string
	limit    int
	after    *redis.Z
}

// listRuns pages through runs newest first, optionally of one workflow
// and in some statuses (?status=failed,cancelled).
func (s *Server) listRuns(c *gin.Context) {
	f, err := runFilterOf(c)
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	index := s.keys.AllRunShards()
	switch {
	case f.unfinishedOnly():
		// Every run not finished is in the active-runs index (the one the
		// reconciler walks), with few finished ones beside them: a page of
		// running runs does not wade through every finished run after them.
		index = s.keys.ActiveRunShards()
	case f.workflow != "":
		index = s.keys.WorkflowRunShards(f.workflow)
	}
	out, err := s.scanRuns(ctx, index, f)
	if err != nil {
		abort(c, err)
		return
	}
	respond(c, http.StatusOK, out)
}

// unfinishedOnly reports whether f asks only for runs that have not
// finished (pending, running, cancelling).
func (f runFilter) unfinishedOnly() bool {
	return len(f.statuses) > 0 && !slices.ContainsFunc(f.statuses, func(st string) bool { return records.RunStatus(st).Terminal() })
}

// runFilterOf parses and checks the query of GET /runs.
func runFilterOf(c *gin.Context) (runFilter, error) {
	var f runFilter
	var err error
	if f.limit, err = limitQuery(c); err != nil {
		return f, err
	}
	cur, err := cursorQuery(c, "runs")
	if err != nil {
		return f, err
	}
	f.after = cur.after()
	if wf, ok := c.GetQuery("workflow"); ok {
		if !workflowName.MatchString(wf) {
			return f, errBadRequest("query parameter workflow=%q is not a workflow name ([a-z0-9][a-z0-9_.-]{0,63})", wf)
		}
		f.workflow = wf
	}
	if st, ok := c.GetQuery("status"); ok {
		for _, v := range strings.Split(st, ",") {
			if !slices.Contains(runStatuses, records.RunStatus(v)) {
				return f, errBadRequest("query parameter status=%q: %q is not a run status (pending, running, succeeded, failed, cancelling, cancelled)", st, v)
			}
			f.statuses = append(f.statuses, v)
		}
	}
	return f, nil
}

// scanRuns reads the index (its shards) in batches, keeping runs that
// match f, until the page is full, the index ends or runScanMax entries
// were read.
func (s *Server) scanRuns(ctx context.Context, index []string, f runFilter) (apiwire.RunPage, error) {
	out := apiwire.RunPage{Items: []apiwire.RunSummary{}}
	after, size := f.after, f.limit
	if len(f.statuses) > 0 {
		size = max(size, runScanBatch)
	}
	for scanned := 0; scanned < runScanMax; {
		batch, err := statestore.PageShards(ctx, s.rdb, index, after, size)
		if err != nil {
			return out, err
		}
		ids := make([]string, len(batch))
		for i, z := range batch {
			ids[i] = z.Member.(string)
		}
		sums, err := s.keys.RunSummaries(ctx, s.rdb, ids...)
		if err != nil {
			return out, err
		}
		for i, m := range sums {
			if len(m) == 0 || (len(f.statuses) > 0 && !slices.Contains(f.statuses, m[records.FieldStatus])) ||
				(f.workflow != "" && m[records.FieldWorkflow] != f.workflow) {
				continue
			}
			out.Items = append(out.Items, summarize(ids[i], m))
			if len(out.Items) == f.limit {
				out.NextCursor = runCursor(batch[i])
				return out, nil
			}
		}
		if len(batch) < size {
			return out, nil
		}
		after = &batch[len(batch)-1]
		scanned += len(batch)
	}
	out.NextCursor = runCursor(*after)
	return out, nil
}

func runCursor(z redis.Z) string {
	return cursor{List: "runs", Score: z.Score, Member: z.Member.(string)}.encode()
}

// summarize builds a run's summary from RunSummaryFields.
func summarize(id string, m map[string]string) apiwire.RunSummary {
	v, _ := strconv.Atoi(m[records.FieldVersion])
	return apiwire.RunSummary{
		ID: id, Workflow: m[records.FieldWorkflow], Version: v, Status: m[records.FieldStatus],
		Paused:    m[records.FieldPaused] == "1",
		CreatedAt: apiwire.UnixMilli(parseMs(m[records.FieldCreated])), StartedAt: apiwire.UnixMilli(parseMs(m[records.FieldStarted])),
		FinishedAt: apiwire.UnixMilli(parseMs(m[records.FieldFinished])), Error: m[records.FieldError],
		RequestedBy: m[records.FieldRequestedBy],
	}
}
