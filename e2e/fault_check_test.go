package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// checkTimeout bounds the checker's reads of Redis and the topics.
const checkTimeout = 60 * time.Second

// faultNode is one node of a fault-suite workflow.
type faultNode struct {
	ID               string         `json:"id"`
	Handler          string         `json:"handler"`
	Config           map[string]any `json:"config,omitempty"`
	DependsOn        []string       `json:"depends_on,omitempty"`
	HeartbeatTimeout string         `json:"heartbeat_timeout,omitempty"`
	Retry            map[string]any `json:"retry,omitempty"`
	TriggerRule      string         `json:"trigger_rule,omitempty"`
	When             string         `json:"when,omitempty"`
	Foreach          string         `json:"foreach,omitempty"`
}

// register registers a workflow of nodes under a unique name made from
// prefix and remembers its edges for checkInvariants. It returns the name.
func (f *faultStack) register(c *apiClient, prefix string, nodes []faultNode) string {
	f.t.Helper()
	def, err := json.Marshal(map[string]any{"name": wfName(f.t, prefix), "nodes": nodes})
	require.NoError(f.t, err)
	name, _ := c.register(def)
	parents, rules, handlers := map[string][]string{}, map[string]string{}, map[string]string{}
	for _, n := range nodes {
		parents[n.ID], rules[n.ID], handlers[n.ID] = n.DependsOn, n.TriggerRule, n.Handler
	}
	f.parents[name], f.rules[name], f.handlers[name] = parents, rules, handlers
	return name
}

// layered returns n simulate nodes of duration d in layers of width (at
// least 2): each node past the first layer depends on two nodes of the
// layer before (fan-in and fan-out).
func layered(n, width int, d time.Duration) []faultNode {
	nodes := make([]faultNode, n)
	for i := range nodes {
		nodes[i] = faultNode{ID: fmt.Sprintf("n%03d", i), Handler: "simulate",
			Config: map[string]any{"duration": d.String(), "output": map[string]any{"i": i}}}
		if i >= width {
			prev := i - width
			nodes[i].DependsOn = []string{nodes[prev].ID, nodes[prev-prev%width+(prev+1)%width].ID}
		}
	}
	return nodes
}

// startRuns starts n runs of workflow and returns the ids the api accepted.
func startRuns(c *apiClient, workflow string, n int) []string {
	ids := make([]string, 0, n)
	for range n {
		ids = append(ids, c.start(workflow, `{}`))
	}
	return ids
}

// checkReport is what checkInvariants counted, for scenario assertions.
type checkReport struct {
	// Dispatches counts task.dispatch records per run/node#instance@attempt.
	Dispatches map[string]int
	// Nodes maps run id → node id → final record.
	Nodes map[string]map[string]records.NodeRecord
	// Instances maps run id → fan-out node id → instance index → final record.
	Instances map[string]map[string]map[int]records.NodeRecord
	// History maps run id → its history lines.
	History map[string][]string
	// SucceededAt maps attemptKey → when the orchestrator applied the
	// attempt's success (the event's at_ms; the record's FinishedAt is
	// the worker's own finish time, which can be much earlier).
	SucceededAt map[string]int64
}

// checkInvariants is the one checker every fault test ends with. It waits
// up to within for every accepted run to be terminal, then verifies:
// each node instance reached a terminal state exactly once (no terminal
// transition repeated for an attempt on workflow.events, at most one
// success per instance, and the stored record agrees with the events);
// no attempt was dispatched before its trigger rule held (checkTrigger);
// every succeeded node and fan-out instance has its output stored; and
// the executions the workers recorded agree (checkLedger).
func (f *faultStack) checkInvariants(runs []string, within time.Duration) checkReport {
	t := f.t
	t.Helper()
	f.waitTerminal(runs, within)
	rep := checkReport{Dispatches: map[string]int{}, Nodes: map[string]map[string]records.NodeRecord{},
		Instances: map[string]map[string]map[int]records.NodeRecord{}, History: map[string][]string{},
		SucceededAt: map[string]int64{}}
	ctx := f.ctx(checkTimeout)
	accepted := map[string]string{} // run → workflow
	for _, id := range runs {
		st, err := f.keys.LoadRun(ctx, f.rdb, id)
		require.NoError(t, err)
		wf := st.Fields[records.FieldWorkflow]
		accepted[id] = wf
		rep.Nodes[id] = f.checkNodes(id, wf, st)
		rep.Instances[id] = f.checkInstances(id, rep.Nodes[id])
		rep.History[id], err = f.rdb.LRange(ctx, f.keys.History(id), 0, -1).Result()
		require.NoError(t, err)
	}
	f.checkEvents(accepted, rep)
	f.checkDispatches(accepted, rep)
	f.checkLedger(accepted, rep)
	return rep
}

// waitTerminal waits until every run in runs is terminal in Redis.
func (f *faultStack) waitTerminal(runs []string, within time.Duration) {
	t := f.t
	t.Helper()
	var open []string
	err := poll(within, func() (bool, error) {
		open = f.openRuns(runs)
		return len(open) == 0, nil
	})
	if err != nil {
		f.describeOpen(open)
	}
	require.NoError(t, err, "%d of %d accepted runs not terminal within %s: %v", len(open), len(runs), within, head(open, 10))
}

// openRuns lists the runs of runs that are not terminal in Redis, as
// "id=status" (a missing run reads as "", which is not terminal).
func (f *faultStack) openRuns(runs []string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	pipe := f.rdb.Pipeline()
	cmds := make([]interface{ Val() string }, len(runs))
	for i, id := range runs {
		cmds[i] = pipe.HGet(ctx, f.keys.Run(id), records.FieldStatus)
	}
	_, _ = pipe.Exec(ctx)
	var open []string
	for i, id := range runs {
		if !records.RunStatus(cmds[i].Val()).Terminal() {
			open = append(open, id+"="+cmds[i].Val())
		}
	}
	return open
}

// describeOpen logs what keeps up to three runs open (their node records
// that are not terminal, the end of their history, the active index and
// the timers), so a stuck run can be diagnosed from the test log.
func (f *faultStack) describeOpen(open []string) {
	ctx := f.ctx(checkTimeout)
	var active []string
	var timers []redis.Z
	for i, key := range f.keys.ActiveRunShards() {
		a, _ := f.rdb.ZRange(ctx, key, 0, -1).Result()
		tm, _ := f.rdb.ZRangeWithScores(ctx, f.keys.TimerShards()[i], 0, 20).Result()
		active, timers = append(active, a...), append(timers, tm...)
	}
	f.t.Logf("active index: %v; first timers: %v", head(active, 20), timers)
	for _, entry := range head(open, 3) {
		id, _, _ := strings.Cut(entry, "=")
		st, err := f.keys.LoadRun(ctx, f.rdb, id)
		if err != nil {
			f.t.Logf("run %s: %v", id, err)
			continue
		}
		var nodes []string
		for node, raw := range st.Nodes {
			if rec, err := records.DecodeNodeRecord([]byte(raw)); err != nil || !rec.State.Terminal() {
				nodes = append(nodes, node+"="+raw)
			}
		}
		hist, _ := f.rdb.LRange(ctx, f.keys.History(id), -20, -1).Result()
		lock, _ := f.rdb.Get(ctx, f.keys.Lock(id)).Result()
		f.t.Logf("run %s fields %v lock %q fence %d\nopen nodes: %v\nhistory tail:\n%s",
			id, st.Fields, lock, f.fence(id), head(nodes, 20), strings.Join(hist, "\n"))
	}
}

// checkNodes checks one run's stored node records and outputs.
func (f *faultStack) checkNodes(run, wf string, st statestore.StoredRun) map[string]records.NodeRecord {
	t := f.t
	parents, ok := f.parents[wf]
	require.True(t, ok, "run %s: unknown workflow %q", run, wf)
	require.Len(t, st.Nodes, len(parents), "run %s: node records", run)
	recs := map[string]records.NodeRecord{}
	for id := range parents {
		rec, err := records.DecodeNodeRecord([]byte(st.Nodes[id]))
		require.NoError(t, err, "run %s node %s", run, id)
		require.True(t, rec.State.Terminal(), "run %s node %s is %s in a terminal run", run, id, rec.State)
		if rec.State == records.NodeSucceeded { // the fault workflows' nodes all return an output (a null one is not stored)
			out, ok := st.Outputs[id]
			require.True(t, ok, "run %s: node %s succeeded without its output", run, id)
			require.True(t, json.Valid([]byte(out)), "run %s node %s output is not JSON: %.80q", run, id, out)
		}
		recs[id] = rec
	}
	return recs
}

// checkInstances checks the instance records and outputs of a run's
// launched fan-out nodes: in a terminal run every started instance is
// terminal and every succeeded one has its output (the fault workflows'
// instances all return one: only a null output is left unstored).
func (f *faultStack) checkInstances(run string, nodes map[string]records.NodeRecord) map[string]map[int]records.NodeRecord {
	t := f.t
	ctx := f.ctx(checkTimeout)
	out := map[string]map[int]records.NodeRecord{}
	for id, rec := range nodes {
		if !rec.FanOut {
			continue
		}
		raws, err := f.rdb.HGetAll(ctx, f.keys.Instances(run, id)).Result()
		require.NoError(t, err)
		outputs, err := f.rdb.HGetAll(ctx, f.keys.InstanceOutputs(run, id)).Result()
		require.NoError(t, err)
		out[id] = map[int]records.NodeRecord{}
		for field, raw := range raws {
			i, err := strconv.Atoi(field)
			require.NoError(t, err, "run %s node %s instance field %q", run, id, field)
			irec, err := records.DecodeNodeRecord([]byte(raw))
			require.NoError(t, err, "run %s node %s#%d", run, id, i)
			require.True(t, irec.State.Terminal(), "run %s node %s#%d is %s in a terminal run", run, id, i, irec.State)
			if irec.State == records.NodeSucceeded {
				o, ok := outputs[field]
				require.True(t, ok && json.Valid([]byte(o)), "run %s: %s#%d succeeded without a JSON output", run, id, i)
			}
			out[id][i] = irec
		}
	}
	return out
}

// checkEvents reads workflow.events from the start: no attempt of a node
// reached a terminal state twice, no instance succeeded twice, and a
// success on the topic is what Redis holds.
func (f *faultStack) checkEvents(accepted map[string]string, rep checkReport) {
	t := f.t
	msgs, err := readTopic(f.ctx(checkTimeout), f.Kafka, f.TopicPrefix+eventsv1.TopicWorkflowEvents)
	require.NoError(t, err)
	terminal, success := map[string]int{}, map[string]int{}
	seqs := map[string]*eventsv1.RunEvent{} // run/seq → the first event published under it
	for _, m := range msgs {
		var ev eventsv1.RunEvent
		require.NoError(t, proto.Unmarshal(m.Value, &ev), "workflow.events offset %d", m.Offset)
		if _, ok := accepted[ev.RunId]; !ok {
			continue
		}
		if republished(t, seqs, &ev) {
			continue
		}
		for _, ch := range ev.Nodes {
			st, ok := terminalStates[ch.State]
			if !ok {
				continue
			}
			inst, rec := ev.RunId+"/"+ch.NodeId, rep.Nodes[ev.RunId][ch.NodeId]
			if ch.FanOut { // one instance of a fan-out node; without the flag, the node as a whole
				inst, rec = fmt.Sprintf("%s#%d", inst, ch.Instance), rep.Instances[ev.RunId][ch.NodeId][int(ch.Instance)]
			}
			attempt := fmt.Sprintf("%s@%d", inst, ch.Attempt)
			terminal[attempt]++
			require.Equal(t, 1, terminal[attempt], "attempt %s reached a terminal state twice (now %s)", attempt, st)
			if st == records.NodeSucceeded {
				rep.SucceededAt[attemptKey(ev.RunId, ch.NodeId, int(ch.Instance), int(ch.Attempt))] = ev.AtMs
				success[inst]++
				require.Equal(t, 1, success[inst], "instance %s completed twice", inst)
				require.Equal(t, records.NodeSucceeded, rec.State, "instance %s succeeded on the topic but is %s in Redis", inst, rec.State)
				require.EqualValues(t, ch.Attempt, rec.Attempt, "instance %s succeeded with another attempt than stored", inst)
			}
		}
	}
}

// republished reports whether ev repeats an event already seen under the
// same run and seq: the producer re-sends a batch whose acknowledgement it
// did not get (Kafka is at-least-once), which is one transition published
// twice, not two transitions. Two different events under one seq would be
// two writes from one state, and fail the test.
func republished(t *testing.T, seen map[string]*eventsv1.RunEvent, ev *eventsv1.RunEvent) bool {
	key := fmt.Sprintf("%s/%d", ev.RunId, ev.Seq)
	first, ok := seen[key]
	if !ok {
		seen[key] = ev
		return false
	}
	a, b := proto.Clone(first).(*eventsv1.RunEvent), proto.Clone(ev).(*eventsv1.RunEvent)
	a.AtMs, b.AtMs = 0, 0 // stamped when the message is built
	require.True(t, proto.Equal(a, b), "run %s: two different events with seq %d:\n%v\n%v", ev.RunId, ev.Seq, first, ev)
	return true
}

// checkDispatches reads task.dispatch from the start: no dispatch of a
// node was sent before its trigger rule held. Under all_success (the
// default) every parent succeeded and had finished when it was sent; under
// all_done, all_failed and none_failed every parent had finished; under
// one_success and one_failed at least one had.
func (f *faultStack) checkDispatches(accepted map[string]string, rep checkReport) {
	t := f.t
	msgs, err := readTopic(f.ctx(checkTimeout), f.Kafka, f.TopicPrefix+eventsv1.TopicTaskDispatch)
	require.NoError(t, err)
	for _, m := range msgs {
		var d eventsv1.TaskDispatch
		require.NoError(t, proto.Unmarshal(m.Value, &d), "task.dispatch offset %d", m.Offset)
		wf, ok := accepted[d.RunId]
		if !ok {
			continue
		}
		rep.Dispatches[fmt.Sprintf("%s/%s#%d@%d", d.RunId, d.NodeId, d.Instance, d.Attempt)]++
		if rec := rep.Nodes[d.RunId][d.NodeId]; !rec.FanOut {
			// A dispatch is of an attempt the node record reached: never of
			// one beyond it (an extra attempt the record does not count).
			require.LessOrEqual(t, int(d.Attempt), rec.Attempt, "run %s: %s attempt %d dispatched, but the node ended at attempt %d",
				d.RunId, d.NodeId, d.Attempt, rec.Attempt)
			require.Positive(t, d.Attempt, "run %s: %s dispatched as attempt 0", d.RunId, d.NodeId)
		}
		f.checkTrigger(wf, &d, rep.Nodes[d.RunId])
	}
}

// checkTrigger checks one dispatch against its node's trigger rule.
func (f *faultStack) checkTrigger(wf string, d *eventsv1.TaskDispatch, nodes map[string]records.NodeRecord) {
	t := f.t
	parents := f.parents[wf][d.NodeId]
	finished := 0
	for _, p := range parents {
		prec := nodes[p]
		done := prec.State.Terminal() && prec.FinishedAt <= d.DispatchedAtMs
		if done {
			finished++
		}
		switch f.rules[wf][d.NodeId] {
		case "", "all_success":
			require.Equal(t, records.NodeSucceeded, prec.State, "run %s: %s dispatched though parent %s is %s", d.RunId, d.NodeId, p, prec.State)
			require.True(t, done, "run %s: %s attempt %d dispatched at %d, before parent %s finished at %d",
				d.RunId, d.NodeId, d.Attempt, d.DispatchedAtMs, p, prec.FinishedAt)
		case "all_done", "all_failed", "none_failed":
			require.True(t, done, "run %s: %s attempt %d dispatched at %d, before parent %s (%s) finished at %d",
				d.RunId, d.NodeId, d.Attempt, d.DispatchedAtMs, p, prec.State, prec.FinishedAt)
		}
	}
	if len(parents) > 0 {
		require.Positive(t, finished, "run %s: %s attempt %d dispatched before any parent finished", d.RunId, d.NodeId, d.Attempt)
	}
}

// requireAllSucceeded requires every run in rep to have succeeded on every node.
func (rep checkReport) requireAllSucceeded(t *testing.T) {
	t.Helper()
	var failed, other []string // failed nodes first: they explain the skipped ones
	for run, nodes := range rep.Nodes {
		for id, rec := range nodes {
			if rec.State == records.NodeSucceeded {
				continue
			}
			line := fmt.Sprintf("run %s node %s: %s (error %q, reason %q, attempt %d, past %d)", run, id, rec.State, rec.Error, rec.Reason, rec.Attempt, len(rec.Past))
			if rec.State == records.NodeFailed {
				failed = append(failed, line)
			} else {
				other = append(other, line)
			}
		}
	}
	if bad := append(failed, other...); len(bad) > 0 {
		t.Fatalf("%d nodes did not succeed:\n%s", len(bad), strings.Join(head(bad, 10), "\n"))
	}
}

// terminalStates maps the wire's terminal node states to ours.
var terminalStates = map[eventsv1.NodeState]records.NodeState{
	eventsv1.NodeState_NODE_STATE_SUCCEEDED: records.NodeSucceeded,
	eventsv1.NodeState_NODE_STATE_FAILED:    records.NodeFailed,
	eventsv1.NodeState_NODE_STATE_SKIPPED:   records.NodeSkipped,
	eventsv1.NodeState_NODE_STATE_CANCELLED: records.NodeCancelled,
}

// head returns at most n elements of s.
func head(s []string, n int) []string { return s[:min(n, len(s))] }
