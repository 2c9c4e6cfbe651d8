package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/braidhq/braid/bench/internal/api"
)

// foreachTimeout bounds the foreach run.
const foreachTimeout = 5 * time.Minute

// errNoForeach marks a build that does not run foreach nodes.
var errNoForeach = errors.New("foreach not supported by this build")

// Foreach maps a noop over ForeachItems items Reps times. A build without
// foreach — the definition is refused, the run fails, or the node does not
// end with one output per item — yields a skipped line, never figures.
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
		if errors.Is(err, errNoForeach) {
			l.Runs = 0
			l.Skipped = err.Error()
			e.Log.Warn(l.Workload+" skipped", "why", err)
			return l, nil
		}
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
// returns its wall time; errNoForeach when the build cannot run it.
func (s *session) foreachOnce(ctx context.Context, n int) (float64, error) {
	wf, err := s.api.Register(ctx, foreachDef("foreach", n))
	var se *api.StatusError
	if errors.As(err, &se) && se.Status >= 400 && se.Status < 500 {
		return 0, fmt.Errorf("%w: registering a foreach node answered %d: %.200s", errNoForeach, se.Status, se.Body)
	}
	if err != nil {
		return 0, err
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
		return 0, fmt.Errorf("%w: the run ended %s: %.200s", errNoForeach, r.Status, r.Error)
	}
	t, err := s.api.GetTask(ctx, id, "each")
	if err != nil {
		return 0, err
	}
	var items []json.RawMessage
	if json.Unmarshal(t.Output, &items) != nil || len(items) != n {
		return 0, fmt.Errorf("%w: the run succeeded but node each did not produce %d outputs (output %.80s)", errNoForeach, n, t.Output)
	}
	return r.WallMs()
}
