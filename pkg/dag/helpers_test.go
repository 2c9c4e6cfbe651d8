package dag

import (
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// problemsOf returns the problems of err, which must be a *ValidationError.
func problemsOf(t *testing.T, err error) []Problem {
	t.Helper()
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "want *ValidationError, got %T: %v", err, err)
	require.NotEmpty(t, ve.Problems)
	return ve.Problems
}

// wf wraps a JSON node list in a minimal valid definition.
func wf(nodes string) []byte {
	return []byte(`{"name": "wf", "nodes": [` + nodes + `]}`)
}

// readSeed reads testdata/NAME.json.
func readSeed(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name + ".json")
	require.NoError(t, err)
	return data
}

// decodeOnly decodes and normalises data without validating, failing on decode problems.
func decodeOnly(t *testing.T, data []byte) *Definition {
	t.Helper()
	p := &parser{}
	d := p.definition(data)
	require.Empty(t, p.probs, "decode problems")
	require.NotNil(t, d)
	return d
}

// chain returns n nodes n0 <- n1 <- ... each depending on the previous one.
func chain(n int) []Node {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: "n" + strconv.Itoa(i), Handler: "noop"}
		if i > 0 {
			nodes[i].DependsOn = []string{nodes[i-1].ID}
		}
	}
	return nodes
}
