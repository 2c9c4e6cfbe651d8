package handler

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNoop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		want   string
	}{
		{name: "null", config: "null", want: "null"},
		{name: "empty", config: "", want: "null"},
		{name: "object", config: `{"a": 1, "b": [true, "x"]}`, want: `{"a":1,"b":[true,"x"]}`},
		{name: "big int kept exact", config: `{"n": 12345678901234567890}`, want: `{"n":12345678901234567890}`},
		{name: "scalar", config: `"hi"`, want: `"hi"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := handle(t, Config{}, NameNoop, tt.config)
			require.NoError(t, err)
			b, err := json.Marshal(out)
			require.NoError(t, err)
			require.Equal(t, tt.want, string(b))
		})
	}
}

func TestNoopInvalidJSON(t *testing.T) {
	t.Parallel()
	_, _, err := handle(t, Config{}, NameNoop, `{"a":`)
	requirePermanent(t, err, "noop")
}
