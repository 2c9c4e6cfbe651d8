package apisvc

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/dag"
	"github.com/braidhq/braid/pkg/records"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
)

func TestHubDropsSlowSubscriber(t *testing.T) {
	t.Parallel()
	h := newHub(2)
	slow, fast, other := h.subscribe("r1"), h.subscribe("r1"), h.subscribe("r2")
	require.True(t, h.wants("r1"))
	require.False(t, h.wants("r3"))
	for seq := uint64(1); seq <= 3; seq++ {
		h.publish(&eventsv1.RunEvent{RunId: "r1", Seq: seq})
		if seq < 3 {
			<-fast.events // fast keeps up
		}
	}
	select {
	case <-slow.gone:
	default:
		t.Fatal("a subscriber whose buffer is full is dropped")
	}
	select {
	case <-fast.gone:
		t.Fatal("a subscriber that keeps up stays")
	default:
	}
	require.Equal(t, uint64(3), (<-fast.events).Seq)
	require.Empty(t, other.events, "events go only to the run's subscribers")
	require.Equal(t, 2, h.count())
	h.unsubscribe(slow) // safe after a drop
	h.unsubscribe(fast)
	h.unsubscribe(other)
	require.Zero(t, h.count())
	require.False(t, h.wants("r1"))
}

func TestWaitingReason(t *testing.T) {
	t.Parallel()
	g, err := dag.Compile(&dag.Definition{Name: "w", Nodes: []dag.Node{
		{ID: "a", Handler: "noop"}, {ID: "b", Handler: "noop"},
		{ID: "c", Handler: "shell", DependsOn: []string{"a", "b"}}, {ID: "ok", Handler: "approval"},
	}})
	require.NoError(t, err)
	now := time.UnixMilli(1_700_000_000_000)
	rec := func(s records.NodeState) records.NodeRecord { return records.NodeRecord{State: s} }
	running := waitCtx{status: records.RunRunning, started: true, now: now}
	tests := []struct {
		name  string
		nodes []records.NodeRecord
		i     int
		w     waitCtx
		want  string
	}{
		{"parents", []records.NodeRecord{rec("running"), rec("queued"), rec("pending"), rec("pending")}, 2, running, "waiting for parents: a, b"},
		{"one parent left", []records.NodeRecord{rec("succeeded"), rec("running"), rec("pending"), rec("pending")}, 2, running, "waiting for parents: b"},
		{"paused", []records.NodeRecord{rec("succeeded"), rec("succeeded"), rec("pending"), rec("pending")}, 2, waitCtx{status: "running", started: true, paused: true}, "run paused"},
		{"retry backoff", []records.NodeRecord{{State: "retry_wait", RetryAt: now.UnixMilli()}}, 0, running, "retry backoff until 2023-11-14T22:13:20.000Z"},
		{"queued", []records.NodeRecord{rec("queued")}, 0, running, "queued: waiting for a worker"},
		{"no worker offers it", []records.NodeRecord{rec("succeeded"), rec("succeeded"), rec("queued")}, 2,
			waitCtx{status: "running", started: true, offers: func(h string) bool { return h == "noop" }}, "no live worker offers handler shell"},
		{"approval", []records.NodeRecord{rec("pending"), rec("pending"), rec("pending"), rec("queued")}, 3, running, "awaiting approval"},
		{"not started", []records.NodeRecord{rec("pending")}, 0, waitCtx{status: "pending"}, "run not started yet: waiting for the orchestrator"},
		{"held by the workflow cap", []records.NodeRecord{rec("pending")}, 0, waitCtx{status: "pending", started: true}, "workflow concurrency: waiting for a free slot"},
		{"running", []records.NodeRecord{rec("running")}, 0, running, ""},
		{"finished", []records.NodeRecord{rec("succeeded")}, 0, running, ""},
		{"run over", []records.NodeRecord{rec("pending")}, 0, waitCtx{status: "failed", started: true}, ""},
	}
	for _, tc := range tests {
		nodes := append(tc.nodes, make([]records.NodeRecord, 4-len(tc.nodes))...)
		for i := range nodes {
			if nodes[i].State == "" {
				nodes[i].State = records.NodePending
			}
		}
		require.Equal(t, tc.want, waitingReason(g, tc.i, nodes, tc.w), tc.name)
	}
}

func TestCheckInput(t *testing.T) {
	t.Parallel()
	specs := map[string]dag.InputSpec{
		"n": {Type: "integer", Required: true}, "d": {Type: "string", Required: true, Default: []byte(`"x"`)},
		"f": {Type: "number"}, "any": {},
	}
	tests := []struct {
		name    string
		input   string
		want    string
		wantErr []string // paths
	}{
		{"ok", `{"n": 1, "f": 2.5, "any": [1]}`, `{"n":1,"f":2.5,"any":[1]}`, nil},
		{"default covers required", `{"n":1}`, `{"n":1}`, nil},
		{"missing required", ``, "", []string{"$.input.n"}},
		{"null input", `null`, "", []string{"$.input.n"}},
		{"wrong types", `{"n":"1","f":true}`, "", []string{"$.input.f", "$.input.n"}},
		{"unknown name", `{"n":1,"weird key":1}`, "", []string{`$.input["weird key"]`}},
		{"not an object", `[1]`, "", []string{"$.input"}},
		{"too large", `{"n":1,"any":"` + strings.Repeat("a", MaxInputBytes) + `"}`, "", []string{"$.input"}},
	}
	for _, tc := range tests {
		got, errs := checkInput(specs, []byte(tc.input))
		var paths []string
		for _, e := range errs {
			paths = append(paths, e.Path)
		}
		require.Equal(t, tc.wantErr, paths, tc.name)
		if tc.wantErr == nil {
			require.Equal(t, tc.want, string(got), tc.name)
		}
	}
	many := make([]string, 2*dag.MaxProblems)
	for i := range many {
		many[i] = fmt.Sprintf(`"u%d":1`, i)
	}
	_, errs := checkInput(specs, []byte(`{"n":1,`+strings.Join(many, ",")+`}`))
	require.Len(t, errs, 2*dag.MaxProblems)
	capped := errInvalid("d", errs).errs
	require.Len(t, capped, dag.MaxProblems+1, "a 422 lists problems capped as definition problems are")
	require.Equal(t, FieldError{Path: "$", Message: "1000 more problems not shown"}, capped[dag.MaxProblems])
	got, errs := checkInput(nil, []byte(`{"anything": {"goes": true}}`))
	require.Empty(t, errs, "a workflow without declared inputs takes any object")
	require.JSONEq(t, `{"anything":{"goes":true}}`, string(got))
	got, errs = checkInput(nil, nil)
	require.Empty(t, errs)
	require.Equal(t, "{}", string(got))
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	gin.SetMode(gin.ReleaseMode)
	cur := cursor{List: "runs", Score: 1.7e12, Member: "0190-abc"}
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest("GET", "/runs?cursor="+cur.encode(), nil)
	got, err := cursorQuery(c, "runs")
	require.NoError(t, err)
	require.Equal(t, cur, *got)
	_, err = cursorQuery(c, "workflows")
	require.Error(t, err, "a cursor of another list is refused")
}

func TestKeyringMatch(t *testing.T) {
	t.Parallel()
	r, err := newKeyring([]APIKey{{Name: "a", Key: "k1", Role: RoleRead}, {Name: "b", Key: "k2", Role: RoleWrite}})
	require.NoError(t, err)
	require.Equal(t, 0, r.match("k1"))
	require.Equal(t, 1, r.match("k2"))
	require.Equal(t, -1, r.match("k3"))
	require.Equal(t, -1, r.match(""))
	empty, err := newKeyring(nil)
	require.NoError(t, err)
	require.Equal(t, -1, empty.match("k1"))
}

// TestMaxAttemptsCountsOnAfterAReset: after a retry of the run reset a
// node allowing 2 attempts that had made 2, its third attempt reads
// "3 of 4" — not "3 of 2".
func TestMaxAttemptsCountsOnAfterAReset(t *testing.T) {
	t.Parallel()
	n := dag.Node{ID: "a", Handler: "shell", Retry: &dag.RetryPolicy{MaxAttempts: 2}}
	first := viewNode(n, records.NodeRecord{State: records.NodeRunning, Attempt: 2}, time.UnixMilli(0))
	require.Equal(t, 2, first.MaxAttempts)
	again := viewNode(n, records.NodeRecord{State: records.NodeRunning, Attempt: 3, AttemptBase: 2}, time.UnixMilli(0))
	require.Equal(t, 3, again.Attempt)
	require.Equal(t, 4, again.MaxAttempts)
}

// TestTaskOutputCutKeepsUTF8Whole: a cut output's head ends before a
// multi-byte character rather than inside it, and an output within the
// bound or with no bound stays whole.
func TestTaskOutputCutKeepsUTF8Whole(t *testing.T) {
	t.Parallel()
	out := []byte(`"aé€b"`) // 1 + 1 + 2 + 3 + 1 + 1 bytes
	for max, head := range map[int]string{1: `"`, 2: `"a`, 3: `"a`, 4: `"aé`, 5: `"aé`, 6: `"aé`, 7: `"aé€`, 8: `"aé€b`} {
		v := taskView{Output: out}
		v.cut(max)
		require.Nil(t, v.Output, "max %d", max)
		require.Equal(t, outputCut{Bytes: 9, Head: head}, *v.OutputCut, "max %d", max)
	}
	for _, max := range []int{0, 9, 100} {
		v := taskView{Output: out}
		v.cut(max)
		require.Equal(t, string(out), string(v.Output), "max %d", max)
		require.Nil(t, v.OutputCut)
	}
	// Stored JSON with spaces is measured and cut as the answer sends it.
	v := taskView{Output: []byte(`[ 1, 2,  3 ]`)}
	v.cut(7)
	require.Equal(t, "[1,2,3]", string(v.Output), "7 bytes compacted: whole")
	v.cut(4)
	require.Equal(t, outputCut{Bytes: 7, Head: "[1,2"}, *v.OutputCut)
}
