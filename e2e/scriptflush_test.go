package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/stretchr/testify/require"
)

// TestOrchestratorReloadsScriptsAfterRedisRestart empties Redis's script
// cache (what a redis-server restart does) between two runs: the
// orchestrator's pipelined EVALSHA meets NOSCRIPT and must load its scripts
// again instead of retrying the batch forever.
func TestOrchestratorReloadsScriptsAfterRedisRestart(t *testing.T) {
	t.Parallel()
	e := startEngine(t, engineOpts{})
	name, v := e.register([]byte(`{"name":"flush","nodes":[{"id":"a","handler":"noop"},{"id":"b","handler":"noop","depends_on":["a"]}]}`))
	st := e.wait(e.start(name, v, `{}`), 30*time.Second)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus])
	require.NoError(t, e.rdb.ScriptFlush(context.Background()).Err())
	st = e.wait(e.start(name, v, `{}`), 30*time.Second)
	require.Equal(t, string(records.RunSucceeded), st.Fields[records.FieldStatus])
}
