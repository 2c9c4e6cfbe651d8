package apisvc

import (
	"encoding/json"
	"testing"

	"github.com/braidhq/braid/pkg/dag"
)

// FuzzCheckInput feeds arbitrary bytes to the run-input validator: it must
// never panic, and whatever it accepts is a JSON object that holds every
// required input.
func FuzzCheckInput(f *testing.F) {
	specs := map[string]dag.InputSpec{
		"n": {Type: "integer", Required: true}, "s": {Type: "string"}, "b": {Type: "boolean"},
		"o": {Type: "object"}, "a": {Type: "array"}, "x": {Type: "number"}, "any": {},
	}
	for _, seed := range []string{``, `null`, `{}`, `{"n":1}`, `{"n":1.5,"s":2}`, `[`, `{"n":1,"o":{},"a":[]}`, `"x"`, `{"n":1e400}`, `{"n":1}{}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, errs := checkInput(specs, raw)
		if len(errs) > 0 {
			if out != nil {
				t.Fatalf("problems %v but output %q", errs, out)
			}
			for _, e := range errs {
				if e.Path == "" || e.Message == "" {
					t.Fatalf("empty problem %+v", e)
				}
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("accepted input %q is not an object: %v", out, err)
		}
		if _, ok := m["n"]; !ok {
			t.Fatalf("accepted input %q lacks the required n", out)
		}
	})
}
