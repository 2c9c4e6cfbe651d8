package records

import (
	"testing"

	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

func TestNodeStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s        NodeState
		terminal bool
		inFlight bool
		proto    eventsv1.NodeState
	}{
		{NodePending, false, false, eventsv1.NodeState_NODE_STATE_PENDING},
		{NodeQueued, false, true, eventsv1.NodeState_NODE_STATE_QUEUED},
		{NodeRunning, false, true, eventsv1.NodeState_NODE_STATE_RUNNING},
		{NodeSucceeded, true, false, eventsv1.NodeState_NODE_STATE_SUCCEEDED},
		{NodeFailed, true, false, eventsv1.NodeState_NODE_STATE_FAILED},
		{NodeRetryWait, false, false, eventsv1.NodeState_NODE_STATE_RETRY_WAIT},
		{NodeSkipped, true, false, eventsv1.NodeState_NODE_STATE_SKIPPED},
		{NodeCancelled, true, false, eventsv1.NodeState_NODE_STATE_CANCELLED},
		{"bogus", false, false, eventsv1.NodeState_NODE_STATE_UNSPECIFIED},
	}
	for _, tc := range tests {
		require.Equal(t, tc.terminal, tc.s.Terminal(), tc.s)
		require.Equal(t, tc.inFlight, tc.s.InFlight(), tc.s)
		require.Equal(t, tc.proto, tc.s.Proto(), tc.s)
	}
}

func TestRunStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s        RunStatus
		terminal bool
		proto    eventsv1.RunStatus
	}{
		{RunPending, false, eventsv1.RunStatus_RUN_STATUS_PENDING},
		{RunRunning, false, eventsv1.RunStatus_RUN_STATUS_RUNNING},
		{RunSucceeded, true, eventsv1.RunStatus_RUN_STATUS_SUCCEEDED},
		{RunFailed, true, eventsv1.RunStatus_RUN_STATUS_FAILED},
		{RunCancelling, false, eventsv1.RunStatus_RUN_STATUS_CANCELLING},
		{RunCancelled, true, eventsv1.RunStatus_RUN_STATUS_CANCELLED},
	}
	for _, tc := range tests {
		require.Equal(t, tc.terminal, tc.s.Terminal(), tc.s)
		require.Equal(t, tc.proto, tc.s.Proto(), tc.s)
	}
}

func TestNodeRecordRoundTripAndSize(t *testing.T) {
	t.Parallel()
	rec := NodeRecord{State: NodeSucceeded, Attempt: 1, QueuedAt: 1763800000000, StartedAt: 1763800000001,
		FinishedAt: 1763800000002, Worker: "host-1234-abcdef"}
	b := rec.Encode()
	got, err := DecodeNodeRecord(b)
	require.NoError(t, err)
	require.Equal(t, rec, got)
	require.Less(t, len(b), 120, "a completed node's record stays compact: %s", b)
	_, err = DecodeNodeRecord([]byte("{"))
	require.Error(t, err)
}
