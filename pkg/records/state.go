package records

import eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"

// RunStatus is a run's lifecycle state.
type RunStatus string

// Run states: pending → running → succeeded | failed | cancelled (cancelling while instances stop).
const (
	RunPending    RunStatus = "pending"
	RunRunning    RunStatus = "running"
	RunSucceeded  RunStatus = "succeeded"
	RunFailed     RunStatus = "failed"
	RunCancelling RunStatus = "cancelling"
	RunCancelled  RunStatus = "cancelled"
)

// Terminal reports whether no further transition can happen to a run in s
// (until a user asks for a retry or rerun).
func (s RunStatus) Terminal() bool {
	return s == RunSucceeded || s == RunFailed || s == RunCancelled
}

// Proto returns the wire enum of s.
func (s RunStatus) Proto() eventsv1.RunStatus {
	switch s {
	case RunPending:
		return eventsv1.RunStatus_RUN_STATUS_PENDING
	case RunRunning:
		return eventsv1.RunStatus_RUN_STATUS_RUNNING
	case RunSucceeded:
		return eventsv1.RunStatus_RUN_STATUS_SUCCEEDED
	case RunFailed:
		return eventsv1.RunStatus_RUN_STATUS_FAILED
	case RunCancelling:
		return eventsv1.RunStatus_RUN_STATUS_CANCELLING
	case RunCancelled:
		return eventsv1.RunStatus_RUN_STATUS_CANCELLED
	}
	return eventsv1.RunStatus_RUN_STATUS_UNSPECIFIED
}

// NodeState is a node instance's lifecycle state.
type NodeState string

// Node instance states: pending → queued → running → succeeded | failed, plus
// retry_wait, skipped and cancelled.
const (
	NodePending   NodeState = "pending"
	NodeQueued    NodeState = "queued"
	NodeRunning   NodeState = "running"
	NodeSucceeded NodeState = "succeeded"
	NodeFailed    NodeState = "failed"
	NodeRetryWait NodeState = "retry_wait"
	NodeSkipped   NodeState = "skipped"
	NodeCancelled NodeState = "cancelled"
)

// Terminal reports whether s is final for the current run attempt.
func (s NodeState) Terminal() bool {
	return s == NodeSucceeded || s == NodeFailed || s == NodeSkipped || s == NodeCancelled
}

// InFlight reports whether a worker may be executing an instance in state s.
func (s NodeState) InFlight() bool { return s == NodeQueued || s == NodeRunning }

// Proto returns the wire enum of s.
func (s NodeState) Proto() eventsv1.NodeState {
	switch s {
	case NodePending:
		return eventsv1.NodeState_NODE_STATE_PENDING
	case NodeQueued:
		return eventsv1.NodeState_NODE_STATE_QUEUED
	case NodeRunning:
		return eventsv1.NodeState_NODE_STATE_RUNNING
	case NodeSucceeded:
		return eventsv1.NodeState_NODE_STATE_SUCCEEDED
	case NodeFailed:
		return eventsv1.NodeState_NODE_STATE_FAILED
	case NodeRetryWait:
		return eventsv1.NodeState_NODE_STATE_RETRY_WAIT
	case NodeSkipped:
		return eventsv1.NodeState_NODE_STATE_SKIPPED
	case NodeCancelled:
		return eventsv1.NodeState_NODE_STATE_CANCELLED
	}
	return eventsv1.NodeState_NODE_STATE_UNSPECIFIED
}
