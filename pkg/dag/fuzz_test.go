package dag

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// marshal encodes d as JSON without escaping '<' and '>'.
func marshal(t *testing.T, d *Definition) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"seed000", "seed002", "seed004", "spec"} {
		f.Add(readSeed(f, name))
	}
	for _, tc := range validationCases {
		f.Add(tc.input)
	}
	f.Add([]byte(`{"name": "x", "nodes": [{"id": "a", "handler": "external_service", "config": {"p": "{{ a.b }} <<"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 || d != nil {
				t.Fatalf("Parse returned %T %v with definition %v", err, err, d != nil)
			}
			return
		}
		g, err := Compile(d)
		if err != nil {
			t.Fatalf("Parse accepted a definition Compile rejects: %v", err)
		}
		if len(g.Order) != len(d.Nodes) {
			t.Fatalf("order has %d of %d nodes", len(g.Order), len(d.Nodes))
		}
		again, err := Parse(marshal(t, d))
		if err != nil || !reflect.DeepEqual(d, again) {
			t.Fatalf("re-parsing the normalised definition changed it (err %v)", err)
		}
	})
}
