package handler

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCappedBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{name: "fits", max: 5, writes: []string{"ab", "cde"}, want: "abcde"},
		{name: "cut", max: 4, writes: []string{"ab", "cdef", "gh"}, want: "abcd…[truncated 4 bytes]"},
		{name: "zero", max: 0, writes: []string{"abc"}, want: "…[truncated 3 bytes]"},
		{name: "rune not split", max: 2, writes: []string{"aé"}, want: "a…[truncated 2 bytes]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := &cappedBuffer{max: tt.max}
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
			}
			require.Equal(t, tt.want, b.String())
		})
	}
}

func TestValidPrefix(t *testing.T) {
	t.Parallel()
	require.Equal(t, 3, validPrefix([]byte("abc")))
	require.Equal(t, 3, validPrefix([]byte("aé")))
	require.Equal(t, 1, validPrefix([]byte("aé")[:2]))
	require.Equal(t, 1, validPrefix([]byte("a€")[:3]))
	require.Equal(t, 0, validPrefix(nil))
}

func TestReadCapped(t *testing.T) {
	t.Parallel()
	kept, dropped, err := readCapped(strings.NewReader("0123456789"), 4)
	require.NoError(t, err)
	require.Equal(t, "0123", string(kept))
	require.EqualValues(t, 6, dropped)
}

func TestLineWriter(t *testing.T) {
	t.Parallel()
	rec := &logRecorder{}
	w := newLineWriter("stdout", rec.log, 1<<20)
	long := strings.Repeat("x", maxLogLine+10)
	for _, chunk := range []string{"one\r\ntw", "o\n\n", long, "\nlast"} {
		_, err := w.Write([]byte(chunk))
		require.NoError(t, err)
	}
	require.Equal(t, []string{"one", "two", ""}, rec.get("stdout")[:3], "lines are logged as they complete")
	w.Flush()
	got := rec.get("stdout")
	require.Len(t, got, 5)
	require.Equal(t, strings.Repeat("x", maxLogLine)+"…[truncated 10 bytes]", got[3])
	require.Equal(t, "last", got[4])
	require.Equal(t, "last", w.last)
	require.Equal(t, "one\r\ntwo\n\n"+long+"\nlast", w.out.String())
}
