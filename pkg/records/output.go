package records

import (
	"bytes"
	"encoding/json"
)

// nullOutput is JSON null, the output of a task that returned nothing.
var nullOutput = []byte("null")

// StoresOutput reports whether out, the output a node or fan-out instance
// succeeded with, is written to the run's outputs hash. JSON null is not:
// a succeeded node or instance without a stored output has output null
// (OutputOf), so the many tasks that return nothing keep no field each in
// Redis (about 50 bytes per node).
func StoresOutput(out []byte) bool { return !bytes.Equal(out, nullOutput) }

// OutputOf is the output of a node or fan-out instance in state st whose
// field in the outputs hash holds stored (found says whether there is
// one): the stored output, JSON null for a succeeded one without, and nil
// (no output) for any other.
func OutputOf(st NodeState, stored string, found bool) json.RawMessage {
	switch {
	case found:
		return json.RawMessage(stored)
	case st == NodeSucceeded:
		return json.RawMessage(nullOutput)
	}
	return nil
}
