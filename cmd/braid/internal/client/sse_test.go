package client

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		want  []Event
	}{
		{name: "one", input: "data: x\n\n", want: []Event{{Type: "message", Data: "x"}}},
		{name: "typed with id", input: "id: 7\nevent: node\ndata: {\"a\":1}\n\n",
			want: []Event{{ID: "7", Type: "node", Data: `{"a":1}`}}},
		{name: "multi-line data", input: "data: a\ndata: b\n\n", want: []Event{{Type: "message", Data: "a\nb"}}},
		{name: "comments and crlf", input: ": ping\r\n\r\ndata:x\r\n\r\n", want: []Event{{Type: "message", Data: "x"}}},
		{name: "id carries over", input: "id: 1\ndata: a\n\ndata: b\n\n",
			want: []Event{{ID: "1", Type: "message", Data: "a"}, {ID: "1", Type: "message", Data: "b"}}},
		{name: "unterminated dropped", input: "data: a\n\ndata: b", want: []Event{{Type: "message", Data: "a"}}},
		{name: "empty", input: "", want: nil},
		{name: "event without data dropped", input: "event: x\n\ndata: y\n\n", want: []Event{{Type: "message", Data: "y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []Event
			err := readEvents(strings.NewReader(tt.input), func(e Event) error { got = append(got, e); return nil })
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestReadEventsStopsOnCallbackError(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop")
	n := 0
	err := readEvents(strings.NewReader("data: a\n\ndata: b\n\n"), func(Event) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)
}

func FuzzReadEvents(f *testing.F) {
	f.Add("id: 1\nevent: x\ndata: y\n\n")
	f.Add(": c\r\ndata\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		_ = readEvents(strings.NewReader(s), func(e Event) error {
			if e.Type == "" {
				t.Fatalf("event without type from %q", s)
			}
			return nil
		})
	})
}
