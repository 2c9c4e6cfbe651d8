package handler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSimulateLedgerRecordsEachExecution(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.tsv")
	for range 2 {
		_, task, err := handle(t, Config{Ledger: path}, NameSimulate, `{"duration": "1ms"}`)
		require.NoError(t, err)
		require.NotNil(t, task)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 4)
	for i, s := range lines {
		l, err := ParseLedgerLine(s)
		require.NoError(t, err)
		phase, outcome := LedgerStart, ""
		if i%2 == 1 {
			phase, outcome = LedgerEnd, "ok"
		}
		require.Equal(t, LedgerLine{TimeMs: l.TimeMs, Phase: phase, Outcome: outcome, Run: "run-1", Node: "node-a", Attempt: 1,
			Key: "run-1/node-a/0/1", Worker: l.Worker, PID: os.Getpid()}, l)
		require.Positive(t, l.TimeMs)
		require.Equal(t, s, l.String(), "a line parses back to itself")
	}

	_, _, err = handle(t, Config{Ledger: filepath.Join(t.TempDir(), "missing", "dir", "ledger")}, NameSimulate, `{}`)
	require.ErrorContains(t, err, "ledger", "an execution that cannot be counted fails")
	_, err = ParseLedgerLine("1\ta\tb")
	require.Error(t, err)
}
