package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// foreachTimeout bounds the foreach run.
const foreachTimeout = 5 * time.Minute

// Foreach maps a noop over ForeachItems items Reps times. A refused
// definition, a failed run or a node without one output per item fails
// the workload (its line carries the error).
func Foreach(ctx context.Context, e *Env) (Line, error) {
	n := e.Sizes.ForeachItems
	l := Line{Workload: fmt.Sprintf("foreach_%d", n), N: n, Runs: e.Reps, Target: "≤ 20 s wall",
		Method: "a transform node emits [range(n)], a noop node maps over it with foreach; wall_ms: created → finished (api, ms); " +
			"tasks_per_s: n / wall; rss_mb: orchestrator VmHWM; checked: the run succeeded and the node's output holds n items"}
	s, err := e.startSession(ctx, l.Workload, "")
	if err != nil {
		return l, err
	}
	defer s.close()
	var wall, rss []float64
	for rep := range e.Reps {
		s.orchestratorPeak()
		w, err := s.foreachOnce(ctx, n)
		if err != nil {
			return l, fmt.Errorf("%s rep %d: %w", l.Workload, rep+1, err)
		}
		wall, rss = append(wall, w), append(rss, s.rssMB())
		e.Log.Info(l.Workload, "rep", rep+1, "wall_ms", w)
	}
	l.set("wall_ms", wall)
	l.set("tasks_per_s", perSecond(float64(n), wall))
	l.set("rss_mb", rss)
	return l, nil
}

// foreachOnce registers (first time) and runs the foreach workflow, and
// returns its wall time.
func (s *session) foreachOnce(ctx context.Context, n int) (float64, error) {
	wf, err := s.api.Register(ctx, foreachDef("foreach", n))
	if err != nil {
		return 0, fmt.Errorf("register the foreach workflow: %w", err)
	}
	id, err := s.api.Start(ctx, wf)
	if err != nil {
		return 0, err
	}
	r, err := s.api.WaitRun(ctx, id, foreachTimeout, 20*time.Millisecond)
	if err != nil {
		return 0, err
	}
	if r.Status != "succeeded" {
		return 0, fmt.Errorf("the foreach run ended %s: %.200s", r.Status, r.Error)
	}
	t, err := s.api.GetTask(ctx, id, "each")
	if err != nil {
		return 0, err
	}
	var items []json.RawMessage
	if json.Unmarshal(t.Output, &items) != nil || len(items) != n {
		return 0, fmt.Errorf("the run succeeded but node each did not produce %d outputs (output %.80s)", n, t.Output)
	}
	return r.WallMs()
}
