package apisvc_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/braidhq/braid/services/api/apisvc"
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

// TestRunEventsOfAnUnknownRunOpenNoFeed: the stream of a run that does not
// exist is a 404 answered before the workflow.events feed opens (broker
// connections kept for the feed's linger only to say "not found"); a known
// run's stream opens it.
func TestRunEventsOfAnUnknownRunOpenNoFeed(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	p := e.must(req{method: "GET", path: "/runs/no-such-run/events", key: readSecret}, http.StatusNotFound).problem(t)
	require.Contains(t, p.Detail, "not found")
	_, _, opened := apisvc.FeedState(e.api)
	require.Zero(t, opened, "a 404 opened the events feed")

	name, _ := e.register(`{"name":"feedopen","nodes":[{"id":"a","handler":"noop"}]}`)
	id := e.startRun(name, nil, nil)
	events := newSSEReader(e.client.stream(t, req{method: "GET", path: "/runs/" + id + "/events", key: readSecret}).Body)
	require.Equal(t, "snapshot", events.next(t, 10*time.Second).event)
	_, _, opened = apisvc.FeedState(e.api)
	require.Equal(t, 1, opened, "a known run's stream opens the feed")
}
