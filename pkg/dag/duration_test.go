package dag

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDurationUnmarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		want    time.Duration
		wantErr string
	}{
		{"string", `"1h30m"`, 90 * time.Minute, ""},
		{"milliseconds", `"500ms"`, 500 * time.Millisecond, ""},
		{"integer seconds", `2`, 2 * time.Second, ""},
		{"fractional seconds", `0.25`, 250 * time.Millisecond, ""},
		{"negative", `"-1s"`, -time.Second, ""},
		{"empty string", `""`, 0, ""},
		{"null", `null`, 0, ""},
		{"bad string", `"soon"`, 0, `invalid duration "soon" (want a form such as "1h30m", "500ms" or "2s")`},
		{"days are not durations", `"1d"`, 0, `invalid duration "1d" (want a form such as "1h30m", "500ms" or "2s")`},
		{"out of range", `1e300`, 0, "duration of 1e+300 seconds is out of range"},
		{"wrong type", `true`, 0, `a duration must be a string such as "1m30s" or a number of seconds`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var d Duration
			err := json.Unmarshal([]byte(tc.input), &d)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, d.Std())
		})
	}
}

func TestDurationMarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Duration
		want string
	}{
		{90 * time.Minute, `"1h30m"`},
		{time.Hour, `"1h"`},
		{2 * time.Minute, `"2m"`},
		{90 * time.Second, `"1m30s"`},
		{10 * time.Second, `"10s"`},
		{500 * time.Millisecond, `"500ms"`},
		{time.Hour + time.Second, `"1h0m1s"`},
		{0, `"0s"`},
	}
	for _, tc := range tests {
		got, err := json.Marshal(Duration(tc.in))
		require.NoError(t, err)
		require.Equal(t, tc.want, string(got))
		var back Duration
		require.NoError(t, json.Unmarshal(got, &back))
		require.Equal(t, tc.in, back.Std(), "round trip of %s", tc.want)
	}
}

func TestDurationOmittedWhenZero(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(Node{ID: "a", Handler: "noop", Timeout: Duration(time.Second)})
	require.NoError(t, err)
	require.JSONEq(t, `{"id": "a", "handler": "noop", "timeout": "1s"}`, string(got))
}
