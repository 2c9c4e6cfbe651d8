package apisvc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/apiwire"
	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// TestRegisterWarnsOfHandlersNobodyOffers: a workflow naming a handler no
// live worker offers registers (workers may start later) with a warning
// naming the handler and its nodes — a typo would otherwise only show as a
// task waiting queued. Handlers a live worker offers, and the
// orchestrator's own (wait, approval), need none; a worker whose
// heartbeats stopped offers nothing.
func TestRegisterWarnsOfHandlersNobodyOffers(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx := context.Background()
	worker := func(id string, handlers []string, seen time.Time) {
		b, err := json.Marshal(records.WorkerStatus{ID: id, Handlers: handlers, HeartbeatIntervalMs: 1000, SeenAt: seen})
		require.NoError(t, err)
		require.NoError(t, e.rdb.HSet(ctx, e.keys.Workers(), id, b).Err())
	}
	register := func(def string) apiwire.WorkflowRef {
		var ref apiwire.WorkflowRef
		e.must(req{method: "POST", path: "/workflows", body: def}, http.StatusCreated).json(t, &ref)
		return ref
	}
	def := `{"name":"thumbs","nodes":[{"id":"fetch","handler":"http","config":{"url":"https://example.com"}},
		{"id":"a","handler":"resize","depends_on":["fetch"]},{"id":"b","handler":"resize","depends_on":["fetch"]},
		{"id":"ok","handler":"approval","depends_on":["a","b"]},{"id":"pause","handler":"wait","config":{"duration":"1s"},"depends_on":["ok"]},
		{"id":"tag","handler":"tagger","depends_on":["pause"]}]}`

	worker("w1", []string{"http", "noop"}, time.Now())
	worker("w2", []string{"resize"}, time.Now().Add(-time.Hour)) // its heartbeats stopped
	ref := register(def)
	require.Equal(t, 1, ref.Version, "a warning does not refuse the workflow")
	require.Equal(t, []string{
		`no live worker offers handler "resize" (nodes a, b): its tasks will wait queued until a worker offering it starts; GET /workers lists what live workers offer`,
		`no live worker offers handler "tagger" (node tag): its tasks will wait queued until a worker offering it starts; GET /workers lists what live workers offer`,
	}, ref.Warnings)

	worker("w2", []string{"resize", "tagger"}, time.Now())
	ref = register(def)
	require.Equal(t, 2, ref.Version)
	require.Empty(t, ref.Warnings, "every handler is offered now")
	resp := e.must(req{method: "POST", path: "/workflows", body: def}, http.StatusCreated)
	require.NotContains(t, string(resp.Body), "warnings", "no warnings: the field is absent")
}
