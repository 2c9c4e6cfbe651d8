package apisvc

import (
	"fmt"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
)

// instanceCounts tallies a fan-out node's instances. Running counts the
// instances in flight or waiting to retry (what the node's concurrency caps).
type instanceCounts struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Running   int `json:"running"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

// countsOf returns a launched fan-out node's counts (nil for other nodes).
func countsOf(rec records.NodeRecord) *instanceCounts {
	if !rec.FanOut {
		return nil
	}
	c := rec.FanOutCounts
	return &instanceCounts{Total: c.Count, Pending: max(c.Count-c.Active-c.Done(), 0), Running: c.Active,
		Succeeded: c.Succeeded, Failed: c.Failed, Cancelled: c.Cancelled}
}

// fanOutReason says why a running fan-out node starts no more instances:
// its concurrency is full ("node concurrency 4/4"), or "" when it is not.
func fanOutReason(n dag.Node, rec records.NodeRecord) string {
	if !rec.FanOut || rec.State != records.NodeRunning || rec.Count-rec.Active-rec.Done() <= 0 {
		return ""
	}
	limit := n.InstanceCap()
	if rec.Active < limit {
		return ""
	}
	return fmt.Sprintf("node concurrency %d/%d", rec.Active, limit)
}
