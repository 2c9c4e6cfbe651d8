package orchsvc

import (
	"time"

	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/braidhq/braid/services/orchestrator/core"
)

// maxEventChangeBytes bounds the node changes one RunEvent carries, well
// under the broker's 1 MiB record limit: a batch that changes very many
// nodes (cancelling a 10,000-node run) is published as several RunEvents
// with consecutive seqs, never as one record the broker refuses forever.
const maxEventChangeBytes = 256 << 10

// changeOverhead approximates a NodeChange's encoded size beyond its strings.
const changeOverhead = 48

// span is a half-open range [from, to) of a batch's changes.
type span struct{ from, to int }

// eventSpans splits changes into consecutive spans of at most
// maxEventChangeBytes each (a single larger change travels alone). There is
// always at least one span, possibly empty, for a run status change.
func eventSpans(r *core.Run, changes []core.Change) []span {
	out := []span{{}}
	size := 0
	for i, c := range changes {
		n := changeOverhead + len(r.NodeID(c.Node)) + len(c.Detail) + len(c.Worker)
		cur := &out[len(out)-1]
		if size+n > maxEventChangeBytes && cur.to > cur.from {
			out = append(out, span{from: i, to: i})
			cur, size = &out[len(out)-1], 0
		}
		cur.to, size = i+1, size+n
	}
	return out
}

// runEvents builds the RunEvents of one stored batch: one per span, with
// the seqs that toWrite reserved (the last is r.Seq); the run's status
// change rides on the last, after every node change.
func runEvents(r *core.Run, eff *core.Effects, spans []span) []*eventsv1.RunEvent {
	if len(spans) == 0 {
		return nil
	}
	now := time.Now().UnixMilli()
	evs := make([]*eventsv1.RunEvent, len(spans))
	for k, sp := range spans {
		ev := &eventsv1.RunEvent{RunId: r.ID, Seq: r.Seq - uint64(len(spans)-1-k), AtMs: now, Workflow: r.Workflow, Version: int32(r.Version)}
		for _, c := range eff.Changes[sp.from:sp.to] {
			ev.Nodes = append(ev.Nodes, &eventsv1.NodeChange{NodeId: r.NodeID(c.Node), Instance: int32(c.Instance),
				Attempt: int32(c.Attempt), State: c.State.Proto(), Detail: c.Detail, WorkerId: c.Worker, AtMs: c.At, FanOut: c.FanOut})
		}
		evs[k] = ev
	}
	if eff.RunStatusChanged() {
		evs[len(evs)-1].RunStatus, evs[len(evs)-1].Detail = r.Status.Proto(), r.Error
	}
	return evs
}
