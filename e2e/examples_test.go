package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStackFeatureExamples runs every feature example in examples/ over the
// process stack and checks the terminal state of the run, of each node, and
// the outputs the example is there to show.
func TestStackFeatureExamples(t *testing.T) {
	t.Parallel()
	s := shared(t)
	tests := []struct {
		file    string
		status  string
		states  map[string]string
		outputs map[string]string // node → its output, as JSON
	}{
		{
			file: "templates-and-inputs.json", status: "succeeded",
			outputs: map[string]string{
				"total":   `{"sum":16,"count":3}`,
				"summary": `{"message":"Hello ADA LOVELACE, you ordered 3 items worth 16","sum":16,"note":"no note"}`,
			},
		},
		{
			file: "fan-in-join.json", status: "succeeded",
			outputs: map[string]string{"join": `{"report":"LISBON: 18 to 24 degrees","range":[18,24]}`},
		},
		{
			file: "retries-and-timeouts.json", status: "succeeded",
			outputs: map[string]string{
				"report": `{"flaky":"attempt 3\n","impatient":"done on attempt 2\n"}`,
			},
		},
		{
			file: "trigger-rules.json", status: "failed",
			states: map[string]string{"load": "failed", "alert": "succeeded", "cleanup": "succeeded", "publish": "skipped"},
		},
		{
			file: "fan-out.json", status: "succeeded",
			outputs: map[string]string{
				"greet":  `[{"city":"LISBON","n":0},{"city":"OSLO","n":1},{"city":"TOKYO","n":2},{"city":"LIMA","n":3}]`,
				"shard":  `[{"shard":0,"of":3},{"shard":1,"of":3},{"shard":2,"of":3}]`,
				"report": `{"first":"LISBON","cities":4,"shards":3}`,
			},
		},
		{
			file: "when-conditions.json", status: "succeeded",
			states:  map[string]string{"high": "succeeded", "low": "skipped", "notify": "succeeded"},
			outputs: map[string]string{"notify": `{"high":"value 250 is above 100"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			c := s.client(t)
			name, _ := c.register(readExample(t, tt.file))
			r := c.waitDone(c.start(name, `{}`), runTimeout)
			require.Equal(t, tt.status, r.Status, "run error: %s", r.Error)
			for id, want := range tt.states {
				require.Equal(t, want, r.node(t, id).State, "node %s", id)
			}
			for id, want := range tt.outputs {
				var task struct {
					Output json.RawMessage `json:"output"`
				}
				c.call(http.MethodGet, "/runs/"+url.PathEscape(r.ID)+"/tasks/"+id, nil, http.StatusOK, &task)
				require.JSONEq(t, want, string(task.Output), "output of %s", id)
			}
		})
	}
}
