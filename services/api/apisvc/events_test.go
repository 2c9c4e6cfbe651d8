package apisvc_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunEventsStream watches a run over SSE: a snapshot with the current
// seq, then live updates up to the run's success; a reconnect with
// Last-Event-ID at the latest seq skips the snapshot.
func TestRunEventsStream(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{engine: true, keepAlive: 100 * time.Millisecond})
	dir := t.TempDir()
	name, _ := e.register(`{"name":"watch","nodes":[
		{"id":"gate","handler":"shell","config":{"command":"while [ ! -f ` + dir + `/go ]; do sleep 0.05; done"}},
		{"id":"after","handler":"noop","depends_on":["gate"]}]}`)
	id := e.startRun(name, nil, nil)
	e.waitStatus(id, "running", 30*time.Second)

	events := newSSEReader(e.client.stream(t, req{method: "GET", path: "/runs/" + id + "/events", key: readSecret}).Body)
	snap := events.next(t, 10*time.Second)
	require.Equal(t, "snapshot", snap.event)
	var run runView
	require.NoError(t, json.Unmarshal([]byte(snap.data), &run))
	require.Equal(t, id, run.ID)
	require.Equal(t, strconv.FormatUint(run.Seq, 10), snap.id)
	require.Equal(t, "running", run.Status)

	require.NoError(t, touch(dir+"/go"))
	last := run.Seq
	states := map[string]string{}
	for status := ""; status != "succeeded"; {
		ev := events.next(t, 10*time.Second)
		require.Equal(t, "update", ev.event)
		var u struct {
			Seq       uint64 `json:"seq"`
			RunStatus string `json:"run_status"`
			Nodes     []struct {
				ID    string `json:"id"`
				State string `json:"state"`
			} `json:"nodes"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.data), &u))
		require.Greater(t, u.Seq, last, "updates come in seq order after the snapshot")
		require.Equal(t, strconv.FormatUint(u.Seq, 10), ev.id)
		last, status = u.Seq, u.RunStatus
		for _, n := range u.Nodes {
			states[n.ID] = n.State
		}
	}
	require.Equal(t, map[string]string{"gate": "succeeded", "after": "succeeded"}, states)

	// Reconnect as a client that has seen everything: no snapshot, only keep-alives.
	again := newSSEReader(e.client.stream(t, req{method: "GET", path: "/runs/" + id + "/events",
		header: map[string]string{"Last-Event-ID": strconv.FormatUint(last, 10)}}).Body)
	ev := again.nextAny(t, 10*time.Second)
	require.Equal(t, "keep-alive", ev.comment, "no snapshot for a client that is up to date (got %+v)", ev)
	// A stale Last-Event-ID gets a fresh snapshot.
	stale := newSSEReader(e.client.stream(t, req{method: "GET", path: "/runs/" + id + "/events",
		header: map[string]string{"Last-Event-ID": "1"}}).Body)
	require.Equal(t, "snapshot", stale.next(t, 10*time.Second).event)
}
