package browser

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHasArg(t *testing.T) {
	t.Parallel()
	const arg = "--user-data-dir=/tmp/T/001"
	tests := []struct {
		name    string
		cmdline string
		want    bool
	}{
		{name: "NUL-separated", cmdline: "/usr/lib/chromium/chromium\x00--no-sandbox\x00" + arg + "\x00", want: true},
		{name: "last, no trailing NUL", cmdline: "chromium\x00" + arg, want: true},
		{name: "rewritten title, space-separated", cmdline: "/usr/lib/chromium/chromium --type=zygote " + arg + " --no-first-run", want: true},
		{name: "another profile it is a prefix of", cmdline: "chromium\x00" + arg + "0\x00"},
		{name: "inside another argument", cmdline: "chromium\x00--x" + arg + "\x00"},
		{name: "a longer path first, then the arg", cmdline: "chromium\x00" + arg + "/sub\x00" + arg + "\x00", want: true},
		{name: "empty (a zombie)", cmdline: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, hasArg([]byte(tc.cmdline), arg))
		})
	}
}
