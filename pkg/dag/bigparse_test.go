package dag

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"testing"
)

// fanOutJSON is a definition of a root, n-2 parallel nodes and a join, as
// a user writes it (the bench's fan-out workload).
func fanOutJSON(tb testing.TB, n int) []byte {
	tb.Helper()
	type node struct {
		ID        string   `json:"id"`
		Handler   string   `json:"handler"`
		DependsOn []string `json:"depends_on,omitempty"`
	}
	nodes := []node{{ID: "root", Handler: "noop"}}
	var mids []string
	for i := range n - 2 {
		id := "n" + strconv.Itoa(i)
		mids = append(mids, id)
		nodes = append(nodes, node{ID: id, Handler: "noop", DependsOn: []string{"root"}})
	}
	nodes = append(nodes, node{ID: "join", Handler: "noop", DependsOn: mids})
	raw, err := json.Marshal(map[string]any{"name": "fan", "nodes": nodes})
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// BenchmarkParseFanOut10000 parses the largest definition the bench
// registers: the api parses it at registration, the orchestrator at a
// version's first run.
func BenchmarkParseFanOut10000(b *testing.B) {
	raw := fanOutJSON(b, MaxNodes)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// parseBothWays parses data with the fast decoders and without them.
func parseBothWays(data []byte) (fast, slow *Definition, fastErr, slowErr error) {
	fast, fastErr = Parse(data)
	fastPaths = false
	defer func() { fastPaths = true }()
	slow, slowErr = Parse(data)
	return fast, slow, fastErr, slowErr
}

// agree fails t unless the fast and the slow decoders gave the same definition and the same
// problems for data.
func agree(t *testing.T, data []byte) {
	t.Helper()
	fast, slow, fastErr, slowErr := parseBothWays(data)
	if !reflect.DeepEqual(fast, slow) || fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
		t.Fatalf("fast and slow decoders disagree on %q:\nfast %+v %v\nslow %+v %v", data, fast, fastErr, slow, slowErr)
	}
}

// TestFastDecodersAgree: the decoders that skip json.Unmarshal (plain strings and string
// lists, objects and arrays split by their structure in valid input) give exactly what
// json.Unmarshal's path gives, definitions and problems alike, including where they must step
// aside: escapes, invalid UTF-8, control characters, duplicate keys, whitespace everywhere,
// invalid JSON.
func TestFastDecodersAgree(t *testing.T) {
	for _, name := range []string{"seed000", "seed002", "seed004", "spec"} {
		agree(t, readSeed(t, name))
	}
	for _, tc := range validationCases {
		agree(t, tc.input)
	}
	agree(t, fanOutJSON(t, 50))
	for _, in := range []string{
		`{"name":"x","nodes":[{"id":"a","handler":"noop"}]}`,
		" \n\t{ \"name\" : \"x\" ,\r\n \"nodes\" : [ { \"id\" : \"a\" , \"handler\" : \"noop\" , \"depends_on\" : [ ] } ] } \n",
		`{"name":"x","nodes":[{"id":"a","handler":"noop"},{"id":"b","handler":"noop","depends_on":[ "a" ]}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop"},{"id":"b","handler":"noop","depends_on":["a","a"]}]}`,
		`{"name":"x","name":"y","nodes":[{"id":"a","id":"b","handler":"noop"}]}`,
		`{"name":"x","nodes":[{"\u0069d":"a","handler":"noop"}]}`,
		`{"name":"x","nodes":[{"id":"\u0061","handler":"noop"}]}`,
		`{"name":"x\u00e9","nodes":[{"id":"a","handler":"noop","config":{"s":"\"q\" \\ \u2028"}}]}`,
		"{\"name\":\"x\xff\",\"nodes\":[{\"id\":\"a\",\"handler\":\"noop\"}]}",
		"{\"name\":\"x\",\"nodes\":[{\"id\":\"a\xc3\",\"handler\":\"noop\"}]}",
		"{\"name\":\"x\",\"nodes\":[{\"id\":\"a\",\"handler\":\"noop\",\"depends_on\":[\"b\xff\"]}]}",
		"{\"name\":\"x\",\"nodes\":[{\"id\":\"a\",\"ha\xffndler\":\"noop\"}]}",
		`{"name":"x","nodes":[{"id":"a","handler":"noop","depends_on":["b",]}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","depends_on":["b" "c"]}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","depends_on":["b"]x}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","depends_on":[1,"b"]}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","depends_on":[null]}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","depends_on":null}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","depends_on":"a"}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","config":{"a":[1,{"b":"}]"}],"c":"\\"}}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","config":{"a":[1,{"b":"}]"}],"c":"\\"}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","concurrency":1.0}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","concurrency":-0, "timeout":"1s"}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","parallel":3,"retry":{"max_attempts":2,"backoff":"fixed"}}]}`,
		`{"name":"x","nodes":[{"id":"a","handler":"noop","retry":{"max_attempts":2,"bogus":true}}]}`,
		`{"name":"x","inputs":{"n":{"type":"integer","default":3}},"nodes":[{"id":"a","handler":"noop"}]}`,
		`{"name":"x","nodes":[]}`, `{"name":"x","nodes":{}}`, `{"name":"x","nodes":[1,"a",null,[]]}`,
		`{}`, `[]`, `null`, `"x"`, ``, `{`, `{"name":"x"`, `{"name":"x","nodes":[{"id":"a","handler":"noop"}]} {}`,
		"{\"name\":\"x\",\"nodes\":[{\"id\":\"a\",\"handler\":\"noop\",\"when\":\"a\tb\"}]}",
	} {
		agree(t, []byte(in))
	}
}

// FuzzParseFastPathsAgree holds the fast decoders to json.Unmarshal's path on any input.
func FuzzParseFastPathsAgree(f *testing.F) {
	for _, name := range []string{"seed000", "seed002", "seed004", "spec"} {
		f.Add(readSeed(f, name))
	}
	for _, tc := range validationCases {
		f.Add(tc.input)
	}
	f.Add([]byte(`{"name":"x","nodes":[{"id":"a","handler":"noop","depends_on":[ "b" , "c" ],"config":{"s":"\"}"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, data)
	})
}
