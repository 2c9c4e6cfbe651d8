package statestore_test

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
)

// redisScriptUsec is the time Redis spent in EVALSHA per call since the
// last CONFIG RESETSTAT (INFO commandstats), the commands the scripts
// called included.
func redisScriptUsec(b *testing.B, ctx context.Context, rdb *redis.Client) float64 {
	b.Helper()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(`cmdstat_evalsha:calls=(\d+),usec=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		b.Fatalf("no evalsha in %s", info)
	}
	calls, _ := strconv.ParseFloat(m[1], 64)
	usec, _ := strconv.ParseFloat(m[2], 64)
	return usec / calls
}

// BenchmarkApplyScript writes what a diamond's node result writes: the run's
// end (seven run fields), the node's record and output, two history lines
// and the attempt's claim deleted. It reports Redis's time per call.
func BenchmarkApplyScript(b *testing.B) {
	e := setup(b)
	ctx, rdb, k := e.ctx, e.rdb, e.keys
	run := "01a220e7-3d92-7abf-80db-556640ae0856"
	value := statestore.NewLockValue("me")
	rdb.Set(ctx, k.Lock(run), value, time.Hour)
	fence, _ := rdb.Incr(ctx, k.Fence(run)).Result()
	rec := records.NodeRecord{State: records.NodeSucceeded, Attempt: 1, QueuedAt: 1795848355426, StartedAt: 1795848355427, FinishedAt: 1795848355428, Worker: "worker-4f2a9c"}.Encode()
	w := statestore.RunWrite{Run: run, Fence: fence, Lock: value,
		RunFields: map[string]string{"status": "succeeded", "started": "1795848355316", "finished": "1795848356668", "error": "", "seq": "4", "paused": "0", "held": "0"},
		Nodes:     map[string][]byte{"join": rec},
		Outputs:   map[string][]byte{"join": []byte(`{"ok":true}`)},
		History:   []string{`{"seq":3,"type":"node.succeeded","node":"join","at":1795848356668}`, `{"seq":4,"type":"run.succeeded","at":1795848356668}`},
		Ended:     []statestore.Attempt{{Run: run, Node: "join", Instance: 0, Attempt: 1}},
	}
	rdb.ConfigResetStat(ctx)
	b.ResetTimer()
	for b.Loop() {
		pipe := rdb.Pipeline()
		cmd := k.QueueWrite(ctx, pipe, w)
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		if cmd.Val().(int64) != statestore.WriteApplied {
			b.Fatal("not applied")
		}
	}
	b.StopTimer()
	b.ReportMetric(redisScriptUsec(b, ctx, rdb), "redis-us/op")
}

// BenchmarkClaimScript claims a queued attempt (a fresh claim key each time).
func BenchmarkClaimScript(b *testing.B) {
	e := setup(b)
	ctx, rdb, k := e.ctx, e.rdb, e.keys
	run := "01a220e7-3d92-7abf-80db-556640ae0856"
	rec := records.NodeRecord{State: records.NodeQueued, Attempt: 1, QueuedAt: 1795848355426}.Encode()
	rdb.HSet(ctx, k.Nodes(run), "left", rec)
	rdb.ConfigResetStat(ctx)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		i++
		res, err := k.ClaimAttempt(ctx, rdb, statestore.Attempt{Run: run, Node: "left", Instance: 0, Attempt: 1}, "worker-"+strconv.Itoa(i), time.Minute)
		if err != nil || res != statestore.ClaimOK {
			// every claim after the first finds the key held by another worker
			if res != statestore.ClaimTaken {
				b.Fatal(res, err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(redisScriptUsec(b, ctx, rdb), "redis-us/op")
}

// BenchmarkEndedScript builds and sends the ended notice of a finished
// 10-node diamond (a subscriber listening), as the orchestrator's last
// write of every run does. It reports Redis's time per call.
func BenchmarkEndedScript(b *testing.B) {
	e := setup(b)
	ctx, rdb, k := e.ctx, e.rdb, e.keys
	run := "01a220e7-3d92-7abf-80db-556640ae0856"
	rdb.HSet(ctx, k.Run(run), "wf", "diamond", "ver", "1", "status", "succeeded", "input", "{}", "created", "1795848355316",
		"requested_by", "key:dev", "started", "1795848355317", "finished", "1795848356668", "error", "", "seq", "21",
		"paused", "0", "held", "0")
	for _, n := range []string{"root", "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "join"} {
		rec := records.NodeRecord{State: records.NodeSucceeded, Attempt: 1, QueuedAt: 1795848355426, StartedAt: 1795848355427, FinishedAt: 1795848355428, Worker: "worker-4f2a9c"}.Encode()
		rdb.HSet(ctx, k.Nodes(run), n, rec)
	}
	sub := rdb.Subscribe(ctx, k.EndedChannel())
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		b.Fatal(err)
	}
	go func() {
		for range sub.Channel() {
		}
	}()
	rdb.ConfigResetStat(ctx)
	b.ResetTimer()
	for b.Loop() {
		pipe := rdb.Pipeline()
		cmd := k.QueueEnded(ctx, pipe, run, true)
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		if cmd.Val().(int64) != 1 {
			b.Fatal("not heard")
		}
	}
	b.StopTimer()
	b.ReportMetric(redisScriptUsec(b, ctx, rdb), "redis-us/op")
}
