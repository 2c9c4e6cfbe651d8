package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// cliRun is the outcome of one command.
type cliRun struct {
	code           int
	stdout, stderr string
}

// braid runs the command tree with args and env (nothing else is read from
// the environment), bounded by 20s.
func braid(t *testing.T, env map[string]string, stdin string, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	a := &app{in: strings.NewReader(stdin), out: &out, errOut: &errOut, getenv: func(k string) string { return env[k] }}
	code := execute(ctx, a, args)
	return cliRun{code: code, stdout: out.String(), stderr: errOut.String()}
}

// fakeAPI is an httptest server with routes keyed "METHOD path"; unknown
// routes answer a 404 problem. It records the API keys it saw.
type fakeAPI struct {
	*httptest.Server
	mu   sync.Mutex
	keys []string
}

func newFakeAPI(t *testing.T, routes map[string]http.HandlerFunc) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.keys = append(f.keys, r.Header.Get("X-API-Key"))
		f.mu.Unlock()
		if h, ok := routes[r.Method+" "+r.URL.Path]; ok {
			h(w, r)
			return
		}
		problem(w, http.StatusNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	}))
	t.Cleanup(f.Close)
	return f
}

// env points the CLI at f with key k.
func (f *fakeAPI) env(k string) map[string]string {
	return map[string]string{"BRAID_URL": f.URL, "BRAID_API_KEY": k}
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"title":%q,"status":%d,"detail":%q}`, http.StatusText(status), status, detail)
}

// runStates serves GET /runs/{id} answering the next of states (JSON
// bodies) on each call and repeating the last; calls counts them.
type runStates struct {
	mu     sync.Mutex
	states []string
	calls  int
	seen   chan struct{} // receives after each call (non-blocking)
}

func newRunStates(states ...string) *runStates {
	return &runStates{states: states, seen: make(chan struct{}, 100)}
}

func (s *runStates) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body := s.states[min(s.calls, len(s.states)-1)]
	s.calls++
	s.mu.Unlock()
	reply(http.StatusOK, body)(w, r)
	select {
	case s.seen <- struct{}{}:
	default:
	}
}

func (s *runStates) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// runJSON renders a run with node states.
func runJSON(id, status string, states ...string) string {
	var nodes []string
	for i, st := range states {
		nodes = append(nodes, fmt.Sprintf(`{"id":"n%d","state":%q,"attempt":1,"worker":"w1"}`, i, st))
	}
	return fmt.Sprintf(`{"id":%q,"workflow":"wf","version":1,"status":%q,"nodes":[%s]}`, id, status, strings.Join(nodes, ","))
}
