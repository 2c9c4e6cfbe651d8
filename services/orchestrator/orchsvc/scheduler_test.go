package orchsvc

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/schedule"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// schedEnv is real Redis and a real Kafka-protocol broker for schedulers
// that share a settable clock.
type schedEnv struct {
	t    *testing.T
	ctx  context.Context
	rdb  *redis.Client
	keys statestore.Keys
	pub  *recordingPub
	now  atomic.Int64 // the shared clock, Unix ms
	wf   string
}

// recordingPub publishes for real and remembers the run ids it sent.
type recordingPub struct {
	prod *eventbus.Producer
	mu   sync.Mutex
	runs []string
}

func (p *recordingPub) Publish(ctx context.Context, msgs ...eventbus.Message) error {
	if err := p.prod.Publish(ctx, msgs...); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range msgs {
		var req eventsv1.RunStartRequested
		if eventbus.Decode(m, &req) == nil {
			p.runs = append(p.runs, req.RunId)
		}
	}
	return nil
}

func (p *recordingPub) published() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.runs...)
}

// t0 is the schedules' creation time in these tests.
var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func newSchedEnv(t *testing.T) *schedEnv {
	t.Helper()
	kafka := testinfra.StartKafka(t)
	e := &schedEnv{t: t, ctx: context.Background(), rdb: testinfra.StartRedis(t).Client(t),
		keys: statestore.Keys{Namespace: testinfra.UniqueName(t, "ns") + ":"}, wf: "nightly"}
	bus := eventbus.Config{Brokers: []string{kafka.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."}
	require.NoError(t, eventbus.EnsureTopics(e.ctx, bus, eventsv1.TopicWorkflowStart))
	prod, err := eventbus.NewProducer(bus)
	require.NoError(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	e.pub = &recordingPub{prod: prod}
	e.now.Store(t0.UnixMilli())
	_, err = e.keys.PutWorkflow(e.ctx, e.rdb, e.wf, []byte(`{"name":"nightly","nodes":[{"id":"a","handler":"noop"}]}`), t0)
	require.NoError(t, err)
	return e
}

func (e *schedEnv) clock() time.Time { return time.UnixMilli(e.now.Load()).UTC() }

// advance moves the shared clock by d.
func (e *schedEnv) advance(d time.Duration) { e.now.Add(d.Milliseconds()) }

// scheduler returns a scheduler named id over the env (lease TTL 1s, poll 20ms).
func (e *schedEnv) scheduler(id string) *scheduler {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if os.Getenv("BRAID_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cfg := Config{ID: id, Redis: e.rdb, Keys: e.keys, Clock: e.clock, SchedulePoll: 20 * time.Millisecond,
		LeaderTTL: time.Second, Logger: log}
	return newScheduler(cfg, e.pub, redislock.New(e.rdb))
}

// start runs sc until the returned stop is called (or the test ends);
// stop(true) also releases its lease (a graceful stop), stop(false) does
// not (a crash: the lease lapses after its TTL).
func (e *schedEnv) start(sc *scheduler) (stop func(release bool)) {
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); sc.run(ctx) }()
	var once sync.Once
	stop = func(release bool) {
		once.Do(func() {
			cancel()
			<-done
			if release {
				sc.lease.release(e.ctx)
			}
		})
	}
	e.t.Cleanup(func() { stop(true) })
	return stop
}

// create stores an enabled schedule created at the current clock.
func (e *schedEnv) create(id, cron, overlap string, enabled bool) {
	e.t.Helper()
	now := e.clock()
	def := statestore.ScheduleDef{ID: id, Workflow: e.wf, Cron: cron, Input: json.RawMessage(`{}`), Enabled: enabled,
		Overlap: overlap, AnchorMs: now.UnixMilli(), CreatedMs: now.UnixMilli(), UpdatedMs: now.UnixMilli()}
	tt, err := timetable(def)
	require.NoError(e.t, err)
	next := time.Time{}
	if enabled {
		next = tt.Next(now)
	}
	require.NoError(e.t, e.keys.CreateSchedule(e.ctx, e.rdb, def, next))
}

// settle waits until no schedule is due at the current clock (every due
// fire was handled).
func (e *schedEnv) settle() {
	e.t.Helper()
	require.Eventually(e.t, func() bool {
		ids, err := e.keys.DueSchedules(e.ctx, e.rdb, e.clock(), 10)
		return err == nil && len(ids) == 0
	}, 10*time.Second, 10*time.Millisecond, "schedules still due at %s", e.clock())
}

// runs lists the runs the schedules requested (pending records), oldest first.
func (e *schedEnv) runs() []string {
	return e.rdb.ZRange(e.ctx, e.keys.WorkflowRunShards(e.wf)[0], 0, -1).Val()
}

// finish marks a requested run as ended, as the orchestrator would.
func (e *schedEnv) finish(run string) {
	require.NoError(e.t, e.rdb.HSet(e.ctx, e.keys.Run(run), records.FieldStatus, "succeeded").Err())
}

func fireIDs(id string, at ...time.Duration) []string {
	out := make([]string, len(at))
	for i, d := range at {
		out[i] = schedule.RunID(id, t0.Add(d))
	}
	return out
}

func TestSchedulerFiresEachPeriodOnce(t *testing.T) {
	t.Parallel()
	e := newSchedEnv(t)
	e.create("every2", "@every 2s", schedule.OverlapAllow, true)
	e.create("off", "@every 1s", schedule.OverlapAllow, false)
	e.start(e.scheduler("a"))
	e.start(e.scheduler("b")) // stands by: one lease
	for range 10 {
		e.advance(time.Second)
		e.settle()
	}
	want := fireIDs("every2", 2*time.Second, 4*time.Second, 6*time.Second, 8*time.Second, 10*time.Second)
	require.ElementsMatch(t, want, e.runs())
	require.ElementsMatch(t, want, e.pub.published(), "each fire published exactly once")
	st, err := e.keys.GetSchedule(e.ctx, e.rdb, "every2")
	require.NoError(t, err)
	require.Equal(t, want[4], st.LastRun)
	require.Equal(t, t0.Add(12*time.Second), st.Next)
	off, err := e.keys.GetSchedule(e.ctx, e.rdb, "off")
	require.NoError(t, err)
	require.Empty(t, off.LastRun, "a disabled schedule never fires")
}

// TestSchedulersRacingNeverDoubleAFire runs two schedulers' polls at the
// same time with no lease at all (as during a split brain) and checks that
// each fire time still gives one run.
func TestSchedulersRacingNeverDoubleAFire(t *testing.T) {
	t.Parallel()
	e := newSchedEnv(t)
	e.create("race", "@every 1s", schedule.OverlapAllow, true)
	a, b := e.scheduler("a"), e.scheduler("b")
	for range 8 {
		e.advance(time.Second)
		var wg sync.WaitGroup
		for _, sc := range []*scheduler{a, b, a, b} {
			wg.Go(func() { require.NoError(t, sc.tick(e.ctx)) })
		}
		wg.Wait()
		e.settle()
	}
	want := fireIDs("race", 1*time.Second, 2*time.Second, 3*time.Second, 4*time.Second,
		5*time.Second, 6*time.Second, 7*time.Second, 8*time.Second)
	require.ElementsMatch(t, want, e.runs(), "one run per fire time")
	require.Subset(t, want, e.pub.published())
	for _, run := range want {
		sums, err := e.keys.RunSummaries(e.ctx, e.rdb, run)
		require.NoError(t, err)
		require.Equal(t, "pending", sums[0][records.FieldStatus])
	}
}

// TestSchedulerLeaseHandover crashes the leader (its loop stops without
// releasing the lease) and checks the standby takes over within the TTL
// and fires from there on.
func TestSchedulerLeaseHandover(t *testing.T) {
	t.Parallel()
	e := newSchedEnv(t)
	e.create("hand", "@every 1s", schedule.OverlapAllow, true)
	leaderOf := func() string {
		return e.rdb.Get(e.ctx, e.keys.Leader("scheduler")).Val()
	}
	stopA := e.start(e.scheduler("alpha"))
	require.Eventually(t, func() bool { return strings.HasSuffix(leaderOf(), "alpha") }, 5*time.Second, 10*time.Millisecond)
	e.start(e.scheduler("bravo"))
	e.advance(time.Second)
	e.settle()
	require.True(t, strings.HasSuffix(leaderOf(), "alpha"), leaderOf())

	stopA(false)
	crashed := time.Now()
	require.Eventually(t, func() bool { return strings.HasSuffix(leaderOf(), "bravo") },
		5*time.Second, 10*time.Millisecond, "bravo did not take the lease")
	// Liveness bound from the lease's contract: TTL (1s) plus a poll, with
	// generous slack for a loaded machine.
	require.Less(t, time.Since(crashed), 3*time.Second)
	e.advance(time.Second)
	e.settle()
	require.ElementsMatch(t, fireIDs("hand", time.Second, 2*time.Second), e.runs())
}

// TestSchedulerCatchUpAfterOutage stops the only scheduler, lets 10 s pass,
// and starts another: only the latest missed fire runs.
func TestSchedulerCatchUpAfterOutage(t *testing.T) {
	t.Parallel()
	e := newSchedEnv(t)
	e.create("catch", "@every 2s", schedule.OverlapAllow, true)
	stop := e.start(e.scheduler("a"))
	e.advance(2 * time.Second)
	e.settle()
	stop(true)
	e.advance(11 * time.Second) // 10 s outage: fires at 4, 6, 8, 10, 12 s missed
	require.Len(t, e.runs(), 1, "nothing fires while no scheduler runs")
	e.start(e.scheduler("b"))
	e.settle()
	require.ElementsMatch(t, fireIDs("catch", 2*time.Second, 12*time.Second), e.runs())
	st, err := e.keys.GetSchedule(e.ctx, e.rdb, "catch")
	require.NoError(t, err)
	require.Equal(t, t0.Add(14*time.Second), st.Next)
}

func TestSchedulerOverlapSkip(t *testing.T) {
	t.Parallel()
	e := newSchedEnv(t)
	e.create("skip", "@every 1s", schedule.OverlapSkip, true)
	e.start(e.scheduler("a"))
	e.advance(time.Second)
	e.settle()
	first := fireIDs("skip", time.Second)
	require.Equal(t, first, e.runs())
	for range 3 { // the first run is still pending: every fire is skipped
		e.advance(time.Second)
		e.settle()
	}
	require.Equal(t, first, e.runs())
	st, err := e.keys.GetSchedule(e.ctx, e.rdb, "skip")
	require.NoError(t, err)
	require.Equal(t, t0.Add(4*time.Second), st.LastSkip)
	e.finish(first[0])
	e.advance(time.Second)
	e.settle()
	require.ElementsMatch(t, fireIDs("skip", time.Second, 5*time.Second), e.runs())
}

// TestSchedulerRepeatedFire requests the same fire twice (a crash between
// publishing and advancing): the started run is left alone.
func TestSchedulerRepeatedFire(t *testing.T) {
	t.Parallel()
	e := newSchedEnv(t)
	e.create("rep", "@every 1s", schedule.OverlapAllow, true)
	sc := e.scheduler("a")
	st, err := e.keys.GetSchedule(e.ctx, e.rdb, "rep")
	require.NoError(t, err)
	run, err := sc.fire(e.ctx, st.Def, t0.Add(time.Second), e.clock())
	require.NoError(t, err)
	require.NoError(t, e.rdb.HSet(e.ctx, e.keys.Run(run), records.FieldStatus, "running").Err())
	again, err := sc.fire(e.ctx, st.Def, t0.Add(time.Second), e.clock().Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, run, again)
	sums, err := e.keys.RunSummaries(e.ctx, e.rdb, run)
	require.NoError(t, err)
	require.Equal(t, "running", sums[0][records.FieldStatus])
	require.Equal(t, []string{run, run}, e.pub.published(), "the request is sent again in case the first was lost")
}

// TestSchedulerDeletedWorkflow records why a fire could not start and moves on.
func TestSchedulerDeletedWorkflow(t *testing.T) {
	t.Parallel()
	e := newSchedEnv(t)
	e.create("orphan", "@every 1s", schedule.OverlapAllow, true)
	require.NoError(t, e.keys.DeleteWorkflow(e.ctx, e.rdb, e.wf, e.clock()))
	e.start(e.scheduler("a"))
	e.advance(time.Second)
	e.settle()
	require.Empty(t, e.runs())
	st, err := e.keys.GetSchedule(e.ctx, e.rdb, "orphan")
	require.NoError(t, err)
	require.Contains(t, st.LastError, "not found")
	require.Equal(t, t0.Add(2*time.Second), st.Next)
}
