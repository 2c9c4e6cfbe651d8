package handler

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		want    int
		wantErr string
	}{
		{name: "empty", raw: "", want: 0},
		{name: "null", raw: " null ", want: 0},
		{name: "object", raw: `{"a":1,"b":null}`, want: 2},
		{name: "array", raw: `[1]`, wantErr: "must be a JSON object, got array"},
		{name: "string", raw: `"x"`, wantErr: "got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, err := parseObject(json.RawMessage(tt.raw))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, o, tt.want)
		})
	}
}

func TestObjectGetErrorsNameField(t *testing.T) {
	t.Parallel()
	o, err := parseObject(json.RawMessage(`{"command": 5, "env": {"A": [1]}, "n": 1.5, "s": null, "w": "x"}`))
	require.NoError(t, err)

	var s string
	require.EqualError(t, o.get("command", &s), `config field "command": want string, got number`)
	var env scalarMap
	require.EqualError(t, o.get("env", &env), `config field "env": key "A": want string, number or boolean, got array`)
	var n int
	require.ErrorContains(t, o.get("n", &n), `config field "n": want integer, got number 1.5`)
	s = "kept"
	require.NoError(t, o.get("s", &s), "null leaves the value")
	require.Equal(t, "kept", s)
	require.NoError(t, o.get("missing", &s))
	require.False(t, o.has("s"))
	require.True(t, o.has("w"))
	var list []int
	require.EqualError(t, o.get("w", &list), `config field "w": want array, got string`)
}

func TestScalarMap(t *testing.T) {
	t.Parallel()
	var m scalarMap
	require.NoError(t, json.Unmarshal([]byte(`{"s":"x","n":8080,"f":1.50,"b":true,"z":null}`), &m))
	require.Equal(t, scalarMap{"s": "x", "n": "8080", "f": "1.50", "b": "true"}, m)
	require.ErrorContains(t, json.Unmarshal([]byte(`["x"]`), &m), "want object, got array")
}

func TestDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    time.Duration
		wantErr string
	}{
		{raw: `"2s"`, want: 2 * time.Second},
		{raw: `"1m30s"`, want: 90 * time.Second},
		{raw: `1.5`, want: 1500 * time.Millisecond},
		{raw: `0`, want: 0},
		{raw: `"soon"`, wantErr: `got "soon"`},
		{raw: `-1`, wantErr: "out of range"},
		{raw: `"-3s"`, wantErr: "out of range"},
		{raw: `1e300`, wantErr: "want duration"},
		{raw: `true`, wantErr: "got boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			var d duration
			err := json.Unmarshal([]byte(tt.raw), &d)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, time.Duration(d))
		})
	}
}

func TestStatusSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    statusSet
		wantErr string
	}{
		{raw: `201`, want: statusSet{201}},
		{raw: `[200, 404]`, want: statusSet{200, 404}},
		{raw: `99`, wantErr: "out of range"},
		{raw: `"200"`, wantErr: "got string"},
		{raw: `[200.5]`, wantErr: "want array of integer"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			var s statusSet
			err := json.Unmarshal([]byte(tt.raw), &s)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, s)
		})
	}
	require.True(t, statusSet(nil).accepts(204))
	require.False(t, statusSet(nil).accepts(304))
	require.True(t, statusSet{404}.accepts(404))
	require.False(t, statusSet{404}.accepts(200))
	require.Equal(t, "200 404", statusSet{200, 404}.String())
}

// FuzzDecodeConfigs feeds arbitrary configs to every decoder: they must
// return a value or an error, never panic.
func FuzzDecodeConfigs(f *testing.F) {
	for _, seed := range []string{
		`null`, `{}`, `[1]`, `{"command":"echo","env":{"A":1},"output":"json"}`,
		`{"url":"http://x","expect_status":[200],"timeout":"1s","body":{"a":1}}`,
		`{"prompt":"p","temperature":0.5,"max_tokens":3}`, `{"duration":1.5,"fail_probability":0.3}`,
		`{"duration_seconds":"2s","output":null}`, `{"mock":true,"mock_delay":"5ms"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = decodeShellConfig(raw)
		_, _ = decodeHTTPConfig(raw)
		_, _ = decodeLLMConfig(raw)
		_, _ = decodeSimulateConfig(raw)
		_, _ = decodeAny(raw)
	})
}
