package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/services/orchestrator/orchsvc"
	"github.com/stretchr/testify/require"
)

// TestReconcilerStartsARunWhoseStartWasLost records a run exactly as the api
// does and never publishes its start (the api died in between): once the
// record is old enough the reconciler requests the start, and the run
// completes with its recorded input.
func TestReconcilerStartsARunWhoseStartWasLost(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{workers: 1, reconcileEvery: 200 * time.Millisecond})
	name, v := e.register([]byte(`{"name":"lost-start","inputs":{"who":{"type":"string"}},
	  "nodes":[{"id":"hello","handler":"noop","config":{"greet":"<< input.who >>"}}]}`))
	fresh := statestore.PendingRun{ID: "lost-start-fresh", Workflow: name, Version: v, Input: []byte(`{"who":"fresh"}`),
		Created: time.Now(), RequestedBy: "e2e"}
	old := fresh
	old.ID, old.Input, old.Created = "lost-start-old", []byte(`{"who":"ada"}`), time.Now().Add(-orchsvc.PendingRestartAfter)
	for _, p := range []statestore.PendingRun{fresh, old} {
		created, err := e.keys.CreatePendingRun(context.Background(), e.rdb, p)
		require.NoError(t, err)
		require.True(t, created)
	}

	st := e.wait(old.ID, 30*time.Second)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus], st.Fields[records.FieldError])
	var out map[string]string
	require.NoError(t, json.Unmarshal([]byte(st.Outputs["hello"]), &out))
	require.Equal(t, "ada", out["greet"], "the run starts with its recorded input")

	status, err := e.rdb.HGet(context.Background(), e.keys.Run(fresh.ID), records.FieldStatus).Result()
	require.NoError(t, err)
	require.Equal(t, "pending", status, "a recent pending record is left to its own start request")
}
