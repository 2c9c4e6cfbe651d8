package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// Sizes of TestStackLargeOutputs: the shell handler keeps 1 MiB of stdout
// and appends a marker; outputs over 256 KiB travel by reference; no
// record may exceed 1 MiB.
const (
	stdoutCap      = 1 << 20
	maxRecordBytes = 1 << 20
	bigStdout      = 10_000_000
)

// TestStackLargeOutputs runs a node that prints 10 MB: its stdout is
// capped at 1 MiB with a marker naming what was dropped, its output (over
// 256 KiB) goes to Redis and task.complete carries a reference, a child
// reads it through a template, a child that would copy it whole into its
// dispatch fails with a clear error instead, no record on any topic of
// the stack exceeds 1 MiB, and a run input too large for a record is
// refused with a 422.
func TestStackLargeOutputs(t *testing.T) {
	t.Parallel()
	s := shared(t)
	c := s.client(t)
	name := wfName(t, "large")
	def := fmt.Sprintf(`{"name": %q, "nodes": [
	  {"id": "big", "handler": "shell", "config": {"command": "head -c %d /dev/zero | tr '\\0' a"}},
	  {"id": "size", "handler": "noop", "depends_on": ["big"], "config": {"n": "<< big.stdout | length >>"}},
	  {"id": "copy", "handler": "noop", "depends_on": ["big"], "config": {"all": "<< big.stdout >>"}}]}`, name, bigStdout)
	c.register([]byte(def))
	id := c.start(name, `{}`)
	r := c.waitDone(id, runTimeout)
	require.Equal(t, "failed", r.Status, "copy must fail: %s", r.Error)
	require.Equal(t, "succeeded", r.node(t, "big").State)
	require.Equal(t, "succeeded", r.node(t, "size").State)
	require.Equal(t, "failed", r.node(t, "copy").State)
	require.Contains(t, r.node(t, "copy").Error, "dispatch limit")

	marker := fmt.Sprintf("…[truncated %d bytes]", bigStdout-stdoutCap)
	var big struct {
		Output struct {
			Stdout string `json:"stdout"`
		} `json:"output"`
	}
	c.call(http.MethodGet, "/runs/"+id+"/tasks/big", nil, http.StatusOK, &big)
	require.Len(t, big.Output.Stdout, stdoutCap+len(marker))
	require.True(t, strings.HasSuffix(big.Output.Stdout, marker), "stdout ends %q", big.Output.Stdout[stdoutCap-20:])
	var size struct {
		Output struct {
			N int `json:"n"`
		} `json:"output"`
	}
	c.call(http.MethodGet, "/runs/"+id+"/tasks/size", nil, http.StatusOK, &size)
	require.Equal(t, len([]rune(big.Output.Stdout)), size.Output.N, "the child read the whole stored output")

	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	refs := 0
	for _, topic := range eventsv1.Topics {
		for _, name := range []string{topic, eventsv1.DLQ(topic)} {
			msgs, err := readTopic(ctx, s.Kafka, s.TopicPrefix+name)
			require.NoError(t, err)
			for _, m := range msgs {
				n := len(m.Key) + len(m.Value)
				for _, h := range m.Headers {
					n += len(h.Key) + len(h.Value)
				}
				require.LessOrEqual(t, n, maxRecordBytes, "%s offset %d is %d bytes", name, m.Offset, n)
				if name != eventsv1.TopicTaskComplete || string(m.Key) != id {
					continue
				}
				var res eventsv1.TaskResult
				require.NoError(t, proto.Unmarshal(m.Value, &res))
				if res.NodeId == "big" && res.Status == eventsv1.TaskStatus_TASK_STATUS_SUCCEEDED {
					require.Empty(t, res.Output, "a large output travels by reference")
					require.NotEmpty(t, res.OutputRef)
					refs++
				}
			}
		}
	}
	require.Positive(t, refs, "no result of big on task.complete")

	// An input that cannot fit in a record is refused as such, never with
	// a 503 that invites retrying what cannot succeed.
	status, body, err := c.raw(http.MethodPost, "/workflows/"+name+"/runs",
		[]byte(`{"input":{"x":"`+strings.Repeat("a", 1200000)+`"}}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, status, "%.300s", body)
	require.Contains(t, string(body), "a run input may be at most")
}
