package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBuildInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		json    string
		pairs   []string
		want    string
		wantErr string
	}{
		{name: "empty", want: `{}`},
		{name: "strings", pairs: []string{"date=2026-01-01", "who=ann"}, want: `{"date":"2026-01-01","who":"ann"}`},
		{name: "typed", pairs: []string{"n=3", "ok=true", "none=null", "xs=[1, 2]", "o={\"a\":1}"},
			want: `{"n":3,"none":null,"o":{"a":1},"ok":true,"xs":[1,2]}`},
		{name: "leading zero stays text", pairs: []string{"id=007"}, want: `{"id":"007"}`},
		{name: "quoted stays text", pairs: []string{`q="x"`}, want: `{"q":"\"x\""}`},
		{name: "value with equals", pairs: []string{"expr=a=b"}, want: `{"expr":"a=b"}`},
		{name: "empty value", pairs: []string{"e="}, want: `{"e":""}`},
		{name: "json base overridden", json: `{"a":1,"b":2}`, pairs: []string{"b=x"}, want: `{"a":1,"b":"x"}`},
		{name: "big number kept", json: `{"n":12345678901234567890}`, want: `{"n":12345678901234567890}`},
		{name: "no equals", pairs: []string{"oops"}, wantErr: `--input "oops": want key=value`},
		{name: "empty key", pairs: []string{"=v"}, wantErr: "want key=value"},
		{name: "json not object", json: `[1]`, wantErr: "--input-json: want a JSON object"},
		{name: "json null", json: `null`, wantErr: "--input-json: want a JSON object"},
		{name: "json broken", json: `{`, wantErr: "--input-json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := buildInput(tt.json, tt.pairs)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
		})
	}
}
