package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// encodingJSON is what encoding/json writes for s, with or without HTML
// escaping.
func encodingJSON(t testing.TB, s string, html bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	require.NoError(t, enc.Encode(s))
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

var cases = []string{
	"", "plain", `say "hi"`, `back\slash`, "<b>&amp;</b>", "tab\tnew\nline\r",
	"\b\f\x00\x01\x1f\x7f", "ünïcødé ✓", "line\u2028sep\u2029para",
	"bad \xff utf-8 \xc3", "\xed\xa0\x80 surrogate", "emoji 😀 and <>&",
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range cases {
		for _, html := range []bool{true, false} {
			require.Equal(t, encodingJSON(t, s, html), string(Append([]byte("x"), s, html))[1:], "%q html=%v", s, html)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range cases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			require.Equal(t, encodingJSON(t, s, html), string(Append(nil, s, html)), "html=%v", html)
		}
	})
}
