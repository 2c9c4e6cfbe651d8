package workload

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestInfoInts(t *testing.T) {
	t.Parallel()
	info := "# Stats\r\ntotal_commands_processed:17\r\ntotal_net_input_bytes:828\r\ninstantaneous_input_kbps:0.01\r\n"
	for _, tt := range []struct {
		name    string
		fields  []string
		want    []int64
		wantErr string
	}{
		{name: "in the asked order", fields: []string{"total_net_input_bytes", "total_commands_processed"}, want: []int64{828, 17}},
		{name: "missing", fields: []string{"total_net_repl_output_bytes"}, wantErr: "total_net_repl_output_bytes"},
		{name: "not an integer", fields: []string{"instantaneous_input_kbps"}, wantErr: `"0.01" is not an integer`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := infoInts(info, tt.fields...)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// lessIdle takes out idle's rate of each counter over the window's length.
func TestUsageLessIdle(t *testing.T) {
	t.Parallel()
	idle := usage{window: 2 * time.Second, cpu: map[string]time.Duration{"api": 20 * time.Millisecond},
		redis: redisStats{commands: 100, clientBytes: 1000}, kafkaRecords: 0}
	u := usage{window: 6 * time.Second, cpu: map[string]time.Duration{"api": time.Second, "redis": time.Second},
		redis: redisStats{commands: 1000, clientBytes: 50000, replBytes: 7}, kafkaRecords: 40, kafkaBytes: 4000}
	got := u.lessIdle(idle)
	require.Equal(t, usage{window: 6 * time.Second, cpu: map[string]time.Duration{"api": 940 * time.Millisecond},
		redis: redisStats{commands: 700, clientBytes: 47000, replBytes: 7}, kafkaRecords: 40, kafkaBytes: 4000}, got)
	require.True(t, math.IsNaN(cpuUs(got, "redis")), "a group the idle window did not time has no net cost")
}
