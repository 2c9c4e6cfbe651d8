package cli

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWorkersListsPoolsAndHandlers: braid workers prints each live
// worker's pool, handlers, tasks in flight out of its concurrency and when
// it was last seen; --all asks for the stopped ones too and says which are
// live; -o json is the api's answer.
func TestWorkersListsPoolsAndHandlers(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC)
	var (
		mu      sync.Mutex
		queries []string
	)
	api := newFakeAPI(t, map[string]http.HandlerFunc{
		"GET /workers": func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			queries = append(queries, r.URL.RawQuery)
			mu.Unlock()
			seen := time.Now().Add(-3 * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
			items := fmt.Sprintf(`{"id":"dev-worker-1","handlers":["http","noop","shell"],"group":"braid-workers","concurrency":64,"in_flight":3,
				"started_at":"2026-11-29T09:30:00.000Z","seen_at":%q,"live":true},
				{"id":"thumbs-1","handlers":["resize"],"group":"braid-workers.0971e8cc6e6e0c1f","concurrency":4,"in_flight":0,"live":true}`, seen)
			if r.URL.RawQuery == "all=true" {
				items += `,{"id":"old-1","handlers":["noop"],"concurrency":8,"in_flight":1,"live":false}`
			}
			reply(http.StatusOK, `{"items":[`+items+`]}`)(w, r)
		},
	})
	res := braid(t, api.env("k"), "", "workers")
	require.Equal(t, 0, res.code, res.stderr)
	lines := strings.Split(strings.TrimRight(res.stdout, "\n"), "\n")
	require.Len(t, lines, 3, res.stdout)
	require.Equal(t, []string{"WORKER", "POOL", "HANDLERS", "IN", "FLIGHT", "STARTED", "SEEN"}, strings.Fields(lines[0]))
	require.Equal(t, append([]string{"dev-worker-1", "braid-workers", "http,noop,shell", "3/64"},
		append(strings.Fields(started.Local().Format("2006-01-02 15:04:05")), "3s", "ago")...), strings.Fields(lines[1]))
	require.Equal(t, []string{"thumbs-1", "braid-workers.0971e8cc6e6e0c1f", "resize", "0/4", "-", "-"}, strings.Fields(lines[2]))

	res = braid(t, api.env("k"), "", "workers", "--all")
	require.Equal(t, 0, res.code, res.stderr)
	lines = strings.Split(strings.TrimRight(res.stdout, "\n"), "\n")
	require.Len(t, lines, 4, res.stdout)
	require.Equal(t, "LIVE", strings.Fields(lines[0])[7])
	require.Equal(t, []string{"old-1", "-", "noop", "1/8", "-", "-", "no"}, strings.Fields(lines[3]))
	mu.Lock()
	require.Equal(t, []string{"", "all=true"}, queries)
	mu.Unlock()

	res = braid(t, api.env("k"), "", "workers", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, `"group": "braid-workers.0971e8cc6e6e0c1f"`)
}

// TestWorkersSaysWhenNoneIsLive: no live worker is said in words, with
// what it means for tasks.
func TestWorkersSaysWhenNoneIsLive(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t, map[string]http.HandlerFunc{"GET /workers": reply(http.StatusOK, `{"items":[]}`)})
	res := braid(t, api.env("k"), "", "workers")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "no live workers (tasks wait queued until one starts")
}
