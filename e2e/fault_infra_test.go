package e2e

import (
	"encoding/json"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFaultRedisKill9 SIGKILLs redis-server (AOF, appendfsync everysec)
// while runs are in flight and restarts it on the same port: everything
// converges within 60 s and no succeeded node lacks its output. While
// Redis is down the api answers a new run with 503 (never 202) within
// its request timeout, and once Redis is back it accepts runs again by
// itself.
func TestFaultRedisKill9(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 2, env: []string{"BRAID_RECONCILE_EVERY=1s"}})
	c := f.client(t)
	wf := f.register(c, "rediskill", layered(50, 10, 20*time.Millisecond))
	ids := startRuns(c, wf, scale(10, 200))
	rnd := faultRand(t)
	for range scale(1, 3) {
		f.hold(between(rnd, 500*time.Millisecond, 2*time.Second))
		t.Logf("killing redis with %d runs active", f.activeRuns())
		f.killRedis()
		f.requireUnavailable(c, wf)
		f.hold(2 * time.Second)
		f.restartRedis()
		ids = append(ids, f.startWhenAccepted(c, wf, 1)...)
	}
	f.checkInvariants(ids, 60*time.Second).requireAllSucceeded(t)
}

// apiRequestTimeout is the api's default bound on one request's Redis and
// Kafka calls (apisvc.DefaultRequestTimeout).
const apiRequestTimeout = 10 * time.Second

// requireUnavailable requires a new run of wf to be refused with 503
// (never accepted) within the api's request timeout plus slack, and logs
// how long the answer took.
func (f *faultStack) requireUnavailable(c *apiClient, wf string) {
	f.t.Helper()
	start := time.Now()
	status, body, err := c.raw(http.MethodPost, "/workflows/"+wf+"/runs", []byte(`{"input":{}}`))
	took := time.Since(start)
	require.NoError(f.t, err, "the api must answer while its infrastructure is down")
	require.Equal(f.t, http.StatusServiceUnavailable, status, "a run cannot be durably requested: %s", body)
	require.Less(f.t, took, apiRequestTimeout+5*time.Second, "the 503 took %s", took)
	f.t.Logf("api answered 503 in %s", took.Round(time.Millisecond))
}

// TestFaultBrokerPaused SIGSTOPs the broker process for a while (10 s; 30 s
// under BRAID_CHAOS) during runs, then SIGKILLs it and restarts it on its
// data directory: all runs finish. While the broker is stopped the api
// answers a new run with 503, quickly, and never with 202.
func TestFaultBrokerPaused(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 2, env: []string{"BRAID_RECONCILE_EVERY=1s"}})
	c := f.client(t)
	wf := f.register(c, "brokerstop", layered(20, 5, 50*time.Millisecond))
	ids := startRuns(c, wf, scale(5, 50))
	f.hold(time.Second)
	f.pause(f.broker)
	f.hold(time.Duration(scale(10, 30))*time.Second, f.broker)
	f.requireUnavailable(c, wf)
	f.resume(f.broker)
	ids = append(ids, startRuns(c, wf, 2)...)
	require.NoError(t, f.broker.signal(syscall.SIGKILL))
	require.Error(t, f.broker.wait(10*time.Second))
	f.restart(f.broker)
	ids = append(ids, f.startWhenAccepted(c, wf, 2)...)
	f.checkInvariants(ids, 90*time.Second).requireAllSucceeded(t)
}

// startWhenAccepted starts n runs, retrying each while the api answers 503
// (infrastructure recovering), and returns the accepted ids.
func (f *faultStack) startWhenAccepted(c *apiClient, wf string, n int) []string {
	var ids []string
	for range n {
		var id string
		err := poll(60*time.Second, func() (bool, error) {
			status, body, err := c.raw(http.MethodPost, "/workflows/"+wf+"/runs", []byte(`{"input":{}}`))
			if err != nil || status == http.StatusServiceUnavailable {
				return false, nil
			}
			require.Equal(f.t, http.StatusAccepted, status, "%s", body)
			id = runID(f.t, body)
			return true, nil
		})
		require.NoError(f.t, err, "the api did not accept a run again")
		ids = append(ids, id)
	}
	return ids
}

// runID decodes the run id of a 202 answer.
func runID(t *testing.T, body []byte) string {
	var out struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal(body, &out))
	require.NotEmpty(t, out.RunID)
	return out.RunID
}
