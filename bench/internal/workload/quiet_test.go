package workload

import "testing"

func TestSavingReadsInfoPersistence(t *testing.T) {
	idle := "# Persistence\r\nloading:0\r\nrdb_bgsave_in_progress:0\r\naof_enabled:1\r\naof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\n"
	if saving(idle) {
		t.Fatalf("an idle server read as saving")
	}
	for _, k := range []string{"rdb_bgsave_in_progress", "aof_rewrite_in_progress", "aof_rewrite_scheduled"} {
		busy := idle[:len("# Persistence\r\n")] + k + ":1\r\n" + idle
		if !saving(busy) {
			t.Errorf("%s:1 did not read as saving", k)
		}
	}
}
