package workload

import (
	"strings"
	"testing"
)

func TestSavingReadsInfoPersistence(t *testing.T) {
	idle := "# Persistence\r\nloading:0\r\nrdb_bgsave_in_progress:0\r\naof_enabled:1\r\naof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\n"
	if busy, err := saving(idle); busy || err != nil {
		t.Fatalf("an idle server read as saving (%v)", err)
	}
	if _, err := saving("# Persistence\r\nloading:0\r\n"); err == nil {
		t.Errorf("an answer without the fields read as not saving")
	}
	for _, k := range []string{"rdb_bgsave_in_progress", "aof_rewrite_in_progress", "aof_rewrite_scheduled"} {
		info := strings.Replace(idle, k+":0", k+":1", 1)
		if busy, err := saving(info); !busy || err != nil {
			t.Errorf("%s:1 did not read as saving (%v)", k, err)
		}
	}
}
