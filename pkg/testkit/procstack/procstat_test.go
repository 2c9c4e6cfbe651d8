package procstack

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseStatus(t *testing.T) {
	t.Parallel()
	m, err := parseStatus([]byte("Name:\torchestrator\nVmPeak:\t 999 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\n"))
	require.NoError(t, err)
	require.Equal(t, Mem{HWM: 20, RSS: 10}, m)
	_, err = parseStatus([]byte("Name:\tx\nVmRSS:\t 1 kB\n"))
	require.Error(t, err)
	_, err = parseStatus([]byte("VmHWM:\t lots kB\nVmRSS:\t 1 kB\n"))
	require.ErrorContains(t, err, "VmHWM")
}

func TestParseStatCPU(t *testing.T) {
	t.Parallel()
	line := "4242 (my (odd) name) S 1 2 3 4 5 6 7 8 9 10 150 50 0 0 20 0 1 0\n"
	d, err := parseStatCPU([]byte(line))
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, d)
	_, err = parseStatCPU([]byte("4242 (x) S 1 2"))
	require.Error(t, err)
	_, err = parseStatCPU([]byte("no paren"))
	require.Error(t, err)
}
