package apisvc

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
)

// logTarget is the attempt whose log a request reads.
type logTarget struct {
	run, node     string
	inst, attempt int
	key           string
	// recKey and recField locate the attempt's record: the node's, or its
	// fan-out instance's.
	recKey, recField string
}

// taskLogs returns an attempt's log lines (?attempt=N, default the
// current one; ?instance=N), or with ?follow=true streams them as SSE
// until the attempt is over or the client leaves.
func (s *Server) taskLogs(c *gin.Context) {
	follow, err := boolQuery(c, "follow")
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	t, err := s.logTargetOf(ctx, c)
	cancel()
	if err != nil {
		abort(c, err)
		return
	}
	if follow {
		if t.attempt == 0 { // not dispatched yet: follow its first attempt
			t.attempt, t.key = 1, s.keys.Logs(t.run, t.node, t.inst, 1)
		}
		s.followLogs(c, t)
		return
	}
	ctx, cancel = s.requestCtx(c)
	defer cancel()
	out := apiwire.LogPage{RunID: t.run, Node: t.node, Instance: t.inst, Attempt: t.attempt, Lines: []apiwire.LogLine{}}
	if t.attempt > 0 {
		raw, err := s.rdb.LRange(ctx, t.key, 0, -1).Result()
		if err != nil {
			abort(c, err)
			return
		}
		out.Lines = decodeLines(raw)
	}
	respond(c, http.StatusOK, out)
}

// logTargetOf checks the path and query and resolves the attempt.
func (s *Server) logTargetOf(ctx context.Context, c *gin.Context) (logTarget, error) {
	var t logTarget
	var err error
	if t.run, t.node, err = runNodeParams(c); err != nil {
		return t, err
	}
	if t.inst, err = intQuery(c, "instance", 0, 0, math.MaxInt32); err != nil {
		return t, err
	}
	want, err := intQuery(c, "attempt", 0, 1, math.MaxInt32)
	if err != nil {
		return t, err
	}
	r, err := s.loadRun(ctx, t.run)
	if err != nil {
		return t, err
	}
	if _, err := r.nodeIndex(t.node); err != nil {
		return t, err
	}
	t.recKey, t.recField = s.keys.Nodes(t.run), t.node
	current := r.record(t.node).Attempt
	if r.record(t.node).FanOut {
		t.recKey, t.recField = s.keys.Instances(t.run, t.node), statestore.InstanceField(t.inst)
		rec, err := s.instanceRecord(ctx, r, t.node, t.inst)
		if err != nil {
			return t, err
		}
		current = rec.Attempt
	} else if t.inst != 0 {
		return t, errNotFound("node %q of run %q is not a fan-out node: it has only instance 0", t.node, t.run)
	}
	t.attempt = current
	if want > 0 {
		if want > current {
			return t, errNotFound("node %q of run %q has no attempt %d (attempts so far: %d)", t.node, t.run, want, current)
		}
		t.attempt = want
	}
	t.key = s.keys.Logs(t.run, t.node, t.inst, t.attempt)
	return t, nil
}

// attemptOver reports whether t's attempt can log no more lines: the node
// moved to a later attempt or reached a final state, or the run ended.
func (s *Server) attemptOver(ctx context.Context, t logTarget) (bool, error) {
	pipe := s.rdb.Pipeline()
	node := pipe.HGet(ctx, t.recKey, t.recField)
	status := pipe.HGet(ctx, s.keys.Run(t.run), records.FieldStatus)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	if records.RunStatus(status.Val()).Terminal() {
		return true, nil
	}
	rec, err := records.DecodeNodeRecordString(node.Val())
	if err != nil || rec.State == "" {
		return false, nil // not started yet
	}
	return rec.Attempt > t.attempt || rec.State.Terminal() || rec.State == records.NodeRetryWait, nil
}

// decodeLines parses stored log lines; unreadable entries are kept as text.
func decodeLines(raw []string) []apiwire.LogLine {
	out := make([]apiwire.LogLine, 0, len(raw))
	for _, r := range raw {
		var l records.LogLine
		if json.Unmarshal([]byte(r), &l) != nil {
			out = append(out, apiwire.LogLine{Stream: "unknown", Line: r})
			continue
		}
		out = append(out, apiwire.LogLine{Time: formatMs(l.TimeMs), Stream: l.Stream, Line: l.Text})
	}
	return out
}
