package workload

import (
	"testing"

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
