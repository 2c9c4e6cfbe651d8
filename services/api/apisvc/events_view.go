package apisvc

import (
	"github.com/braidhq/braid/pkg/records"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// runEventView is the data of an SSE "update" event: one RunEvent.
type runEventView struct {
	RunID     string           `json:"run_id"`
	Seq       uint64           `json:"seq"`
	At        string           `json:"at,omitempty"`
	Workflow  string           `json:"workflow"`
	Version   int              `json:"version"`
	RunStatus string           `json:"run_status,omitempty"`
	Detail    string           `json:"detail,omitempty"`
	Nodes     []nodeChangeView `json:"nodes"`
}

// nodeChangeView is one node transition of a run event.
type nodeChangeView struct {
	ID       string `json:"id"`
	Instance int    `json:"instance"`
	Attempt  int    `json:"attempt"`
	State    string `json:"state"`
	Detail   string `json:"detail,omitempty"`
	Worker   string `json:"worker,omitempty"`
	At       string `json:"at,omitempty"`
}

// Reverse maps of the wire enums, built from records' own mapping.
var (
	runStatusNames = map[eventsv1.RunStatus]string{}
	nodeStateNames = map[eventsv1.NodeState]string{}
)

func init() {
	for _, s := range runStatuses {
		runStatusNames[s.Proto()] = string(s)
	}
	for _, s := range []records.NodeState{
		records.NodePending, records.NodeQueued, records.NodeRunning, records.NodeSucceeded,
		records.NodeFailed, records.NodeRetryWait, records.NodeSkipped, records.NodeCancelled,
	} {
		nodeStateNames[s.Proto()] = string(s)
	}
}

// viewEvent renders a RunEvent for SSE clients.
func viewEvent(ev *eventsv1.RunEvent) runEventView {
	v := runEventView{
		RunID: ev.RunId, Seq: ev.Seq, At: formatMs(ev.AtMs), Workflow: ev.Workflow, Version: int(ev.Version),
		RunStatus: runStatusNames[ev.RunStatus], Detail: ev.Detail, Nodes: make([]nodeChangeView, len(ev.Nodes)),
	}
	for i, n := range ev.Nodes {
		v.Nodes[i] = nodeChangeView{
			ID: n.NodeId, Instance: int(n.Instance), Attempt: int(n.Attempt), State: nodeStateNames[n.State],
			Detail: n.Detail, Worker: n.WorkerId, At: formatMs(n.AtMs),
		}
	}
	return v
}
