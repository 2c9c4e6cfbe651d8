package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/template"
	"github.com/expr-lang/expr"
)

// launch starts node i whose trigger rule fired: it evaluates `when`, then
// queues the first attempt. It reports whether the node ended up terminal
// instead (skipped by `when`, or failed to evaluate).
func (r *Run) launch(i int, now int64, eff *Effects) (terminal bool) {
	ok, err := r.evalWhen(i)
	if err != nil {
		r.fail(i, err.Error(), now, eff)
		return true
	}
	if !ok {
		r.Nodes[i].WhenSkipped = true
		r.skipNode(i, false, "when condition is false", now, eff)
		return true
	}
	if r.Plan.Graph.Def.Nodes[i].FanOut() {
		return r.startFanOut(i, now, eff)
	}
	return !r.queue(i, now, eff)
}

// queue dispatches the next attempt of node i. It reports false when the
// node failed instead (a template could not be resolved).
func (r *Run) queue(i int, now int64, eff *Effects) bool {
	n := &r.Nodes[i]
	node := r.Plan.Graph.Def.Nodes[i]
	cfg, err := r.resolveConfig(i)
	n.Attempt++
	if err != nil {
		r.fail(i, err.Error(), now, eff)
		return false
	}
	n.QueuedAt, n.StartedAt, n.FinishedAt, n.Worker, n.RetryAt, n.Deadline, n.Lost = now, 0, 0, "", 0, 0, 0
	builtin := r.builtin(i) != ""
	if node.Timeout > 0 {
		n.Deadline = now + ms(node.Timeout)
		if !builtin { // the worker enforces it first; this is the backstop
			n.Deadline += DeadlineGrace.Milliseconds()
		}
		eff.Timers = append(eff.Timers, TimerArm{Kind: TimerDeadline, Node: node.ID, Attempt: n.Attempt, At: n.Deadline})
	}
	if builtin {
		return r.startBuiltin(i, cfg.config, now, eff)
	}
	r.transition(i, records.NodeQueued, "", now, eff)
	eff.Dispatches = append(eff.Dispatches, r.dispatchOf(i, cfg))
	return true
}

// dispatchOf builds the dispatch of node i's current attempt.
func (r *Run) dispatchOf(i int, cfg resolved) Dispatch {
	node := r.Plan.Graph.Def.Nodes[i]
	attempt := r.Nodes[i].Attempt
	return Dispatch{
		Node: i, Count: 1, Attempt: attempt, Handler: node.Handler, Config: cfg.config, Secrets: cfg.secrets,
		IdempotencyKey:   IdempotencyKey(r.ID, node.ID, 0, attempt),
		TimeoutMs:        ms(node.Timeout),
		HeartbeatTimeout: ms(cmpDuration(node.HeartbeatTimeout, DefaultHeartbeatTimeout)),
	}
}

// fail moves node i to failed with a permanent error.
func (r *Run) fail(i int, msg string, now int64, eff *Effects) {
	n := &r.Nodes[i]
	n.Error, n.FinishedAt = msg, now
	r.transition(i, records.NodeFailed, msg, now, eff)
}

// IdempotencyKey is stable per (run, node, instance, attempt).
func IdempotencyKey(run, node string, inst, attempt int) string {
	return run + ":" + node + ":" + strconv.Itoa(inst) + ":" + strconv.Itoa(attempt)
}

// scope builds the template scope of node i: input, run, and the outputs of
// the nodes its templates reference.
func (r *Run) scope(refs []string, decode func(json.RawMessage) any) template.MapScope {
	s := template.MapScope{
		"input": decode(r.Input),
		"run":   map[string]any{"id": r.ID, "workflow": r.Workflow, "version": r.Version},
	}
	for _, name := range refs {
		if j := r.Index(name); j >= 0 && r.Outputs[j] != nil {
			s[name] = decode(r.Outputs[j])
		}
	}
	return s
}

// resolved is a node's config with every template resolved but its secret
// references, which the worker fills in (template.Slot).
type resolved struct {
	config  json.RawMessage
	secrets []template.Slot
}

// resolveConfig returns node i's config with every template resolved. In a
// shell node's command every substituted value is shell-quoted.
func (r *Run) resolveConfig(i int) (resolved, error) {
	node := r.Plan.Graph.Def.Nodes[i]
	if !r.Plan.nodes[i].hasTmpl {
		return resolved{config: orNull(node.Config)}, nil
	}
	return r.resolveIn(i, r.scope(r.Plan.Graph.Refs[i], decodeJSON))
}

// resolveIn resolves node i's config templates against scope.
func (r *Run) resolveIn(i int, scope template.MapScope) (resolved, error) {
	node := r.Plan.Graph.Def.Nodes[i]
	cfg, command, isShell := r.Plan.nodes[i].config, "", false
	if m, ok := cfg.(map[string]any); ok && node.Handler == "shell" {
		command, isShell = m["command"].(string)
		if isShell {
			cfg = without(m, "command")
		}
	}
	var res resolved
	out, err := r.resolveValue(i, cfg, scope, &res)
	if err != nil {
		return resolved{}, templateErr(node.ID, err)
	}
	if isShell {
		quoted, err := template.ResolveShell(command, scope)
		if err != nil {
			return resolved{}, templateErr(node.ID, err)
		}
		out.(map[string]any)["command"] = quoted
	}
	b, err := json.Marshal(out)
	if err == nil && len(b) > MaxConfigBytes {
		return resolved{}, fmt.Errorf("node %s: resolved config is %d bytes, over the %d-byte dispatch limit; pass large data by reference", node.ID, len(b), MaxConfigBytes)
	}
	res.config = b
	return res, err
}

// resolveValue resolves cfg against scope; a node that references secrets
// gets them as slots in res instead (the registered definition keeps them
// out of a shell command, which is resolved apart).
func (r *Run) resolveValue(i int, cfg any, scope template.MapScope, res *resolved) (any, error) {
	if !r.Plan.nodes[i].hasSecret {
		return template.Resolve(cfg, scope)
	}
	out, slots, err := template.ResolveDeferring(cfg, scope, dag.RootSecret)
	res.secrets = slots
	return out, err
}

// MaxConfigBytes bounds a node's resolved config so that a dispatch always
// fits in one Kafka record (1 MiB with headroom for the envelope).
const MaxConfigBytes = 900 << 10

func templateErr(node string, err error) error {
	var te *template.Error
	if errors.As(err, &te) {
		return fmt.Errorf("node %s: %w", node, te)
	}
	return fmt.Errorf("node %s: template: %w", node, err)
}

// without returns a shallow copy of m without key k. The shell command is
// resolved on its own, with quoting, and never passes through Resolve: a
// substituted value could otherwise be read as a template.
func without(m map[string]any, k string) map[string]any {
	c := make(map[string]any, len(m))
	for key, val := range m {
		if key != k {
			c[key] = val
		}
	}
	return c
}

// evalWhen evaluates node i's `when` over its inputs and upstream outputs.
func (r *Run) evalWhen(i int) (bool, error) {
	pn := r.Plan.nodes[i]
	if pn.when == nil {
		return true, nil
	}
	s := r.scope(pn.whenNames, decodeForExpr)
	env := map[string]any(s)
	out, err := expr.Run(pn.when, env)
	if err != nil {
		return false, fmt.Errorf("node %s: when %q: %w", r.NodeID(i), r.Plan.Graph.Def.Nodes[i].When, err)
	}
	b, _ := out.(bool)
	return b, nil
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func ms(d dag.Duration) int64 { return int64(d) / 1e6 }

func cmpDuration(d dag.Duration, def interface{ Milliseconds() int64 }) dag.Duration {
	if d > 0 {
		return d
	}
	return dag.Duration(def.Milliseconds() * 1e6)
}
