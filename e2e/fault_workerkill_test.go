package e2e

import (
	"context"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/runstate"
	"github.com/braidhq/braid/pkg/worker"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// Worker kill cadence: the gap between two kills is drawn from
// [killGapMin, killGapMax) (and may be longer: see killWorkers).
const (
	killGapMin = 2 * time.Second
	killGapMax = 4 * time.Second
)

// TestFaultWorkerKill9 SIGKILLs a random busy worker every few seconds
// (see killWorkers for the cadence) for the whole time tasks of about a
// second run, restarting each victim: every task succeeds, re-executions
// stay within kills × concurrency, and nothing is stuck.
func TestFaultWorkerKill9(t *testing.T) {
	t.Parallel()
	f := startFaultStack(t, stackOpts{workers: 3, env: workerFaultEnv})
	c := f.client(t)
	wf := f.register(c, "workerkill", sleepyNodes(20, time.Second))
	start := time.Now()
	ids := startRuns(c, wf, scale(12, 25))
	kills := f.killWorkers(ids, faultRand(t), scale(5*time.Minute, 6*time.Minute))
	require.GreaterOrEqual(t, len(kills), 3, "the runs ended before a few kills: %v", kills)
	rep := f.checkInvariants(ids, 2*time.Minute)
	rep.requireAllSucceeded(t)
	reexec := 0
	for _, nodes := range rep.Nodes {
		for _, rec := range nodes {
			reexec += rec.Attempt - 1
		}
	}
	t.Logf("%d tasks in %s: %d kills at %v; %d re-executions", len(ids)*20,
		time.Since(start).Round(100*time.Millisecond), len(kills), kills, reexec)
	require.Positive(t, reexec, "the kills interrupted no attempt")
	require.LessOrEqual(t, reexec, len(kills)*workerConcurrency, "re-executions beyond kills × concurrency")
}

// killWorkers SIGKILLs a random busy worker every few seconds until every
// run in runs is terminal or within passes, and returns when each kill
// happened, since its start.
//
// A victim is a worker that has joined its consumer group since its last
// start (kfake would never expire a member killed before its first
// JoinGroup answer: see waitJoined) and runs an attempt of runs; it is
// killed only while another joined worker stays alive, so the load always
// keeps a consumer. The workers' group rebalances eagerly (kafka-go):
// while a rebalance waits for a member no member consumes, and a dead
// member is waited for until its session expires (or the rebalance
// timeout). So a victim is restarted once the broker has dropped its dead
// member, not at once (its join would start a rebalance waiting for the
// dead member), and the next kill comes killGapMin–killGapMax after the
// group is settled again: stable, with every live worker in it and no dead
// one (a kill during the restarted worker's join stalls the group the same
// way, and a kill at the very moment the group settles hits tasks that
// have just started, over and over for the last ones). Kills therefore
// come every session timeout, rejoin and gap: about 10 s with a 6 s
// session. Killing every 2–4 s regardless kept the group stalled nearly
// all the time (160 one-second tasks on 12 slots took four minutes, and
// one ran out of ten attempts).
func (f *faultStack) killWorkers(runs []string, rnd *rand.Rand, within time.Duration) []time.Duration {
	f.t.Helper()
	k := &workerKiller{f: f, runs: runs, rnd: rnd, joined: map[int]bool{}, down: map[*proc]deadWork{},
		dead: map[string]bool{}, group: &kafka.Client{Addr: kafka.TCP(f.Kafka), Timeout: 5 * time.Second}, start: time.Now()}
	deadline := k.start.Add(within)
	var next time.Time // when to kill, once the group is settled
	for len(f.openRuns(runs)) > 0 && time.Now().Before(deadline) {
		g := k.describe()
		k.restartExpired(g, false)
		switch {
		case len(k.down) > 0 || !k.settled(g):
			next = time.Time{}
		case next.IsZero():
			next = time.Now().Add(between(rnd, killGapMin, killGapMax))
		case time.Now().After(next) && k.killOne():
			next = time.Time{}
		}
		f.hold(250*time.Millisecond, slices.Collect(maps.Keys(k.down))...)
	}
	k.restartExpired(k.describe(), true)
	return k.kills
}

// workerKiller is the state of killWorkers.
type workerKiller struct {
	f      *faultStack
	runs   []string
	rnd    *rand.Rand
	joined map[int]bool       // pids seen joined
	down   map[*proc]deadWork // killed, not restarted yet
	dead   map[string]bool    // group member ids of killed processes
	group  *kafka.Client
	start  time.Time
	kills  []time.Duration
}

// deadWork is a killed worker's group member id and when it was killed.
type deadWork struct {
	member string
	at     time.Time
}

// groupView is what the broker says of the workers' group.
type groupView struct {
	state   string
	members map[string]bool
	err     error
}

// memberGone bounds the wait for the broker to drop a killed worker's
// member: past it the worker is restarted anyway.
const memberGone = 30 * time.Second

// killOne kills a random killable worker, if there is one.
func (k *workerKiller) killOne() bool {
	victims := k.killable()
	if len(victims) == 0 {
		return false
	}
	w := k.f.workerProcs[victims[k.rnd.IntN(len(victims))]]
	member := memberID(w)
	k.f.kill(w)
	k.down[w] = deadWork{member: member, at: time.Now()}
	k.dead[member] = true
	k.kills = append(k.kills, time.Since(k.start).Round(100*time.Millisecond))
	k.f.t.Logf("worker kill %d at %s (member %s)", len(k.kills), k.kills[len(k.kills)-1], member)
	return true
}

// restartExpired restarts the killed workers whose member g no longer
// lists (all of them when all is set).
func (k *workerKiller) restartExpired(g groupView, all bool) {
	for w, d := range k.down {
		gone := g.err == nil && !g.members[d.member]
		if !all && !gone && time.Since(d.at) < memberGone {
			continue
		}
		if !gone && !all {
			k.f.t.Logf("the group still lists killed %s's member %s after %s (%v); restarting it anyway", w.name, d.member, memberGone, g.err)
		}
		k.f.restart(w)
		delete(k.down, w)
	}
}

// settled reports whether g is stable with every live worker in it and no
// killed one.
func (k *workerKiller) settled(g groupView) bool {
	if g.err != nil || g.state != "Stable" {
		return false
	}
	live := 0
	for _, w := range k.f.workerProcs {
		if !w.exited() {
			live++
		}
	}
	for m := range g.members {
		if k.dead[m] {
			return false
		}
	}
	return len(g.members) == live
}

// describe asks the broker for the workers' group.
func (k *workerKiller) describe() groupView {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := k.group.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{worker.DefaultGroup}})
	if err != nil {
		return groupView{err: err}
	}
	v := groupView{members: map[string]bool{}}
	for _, g := range resp.Groups {
		if g.Error != nil {
			return groupView{err: g.Error}
		}
		v.state = g.GroupState
		for _, m := range g.Members {
			v.members[m.MemberID] = true
		}
	}
	return v
}

// killable lists the indexes (in f.workerProcs) of the busy workers that may
// be killed now: joined since their last start, with at least one other
// joined worker left.
func (k *workerKiller) killable() []int {
	var live []int
	for i, w := range k.f.workerProcs {
		if !w.exited() && (k.joined[w.pid()] || hasJoined(w)) {
			k.joined[w.pid()] = true
			live = append(live, i)
		}
	}
	if len(live) < 2 {
		return nil
	}
	var out []int
	for _, i := range k.f.busyWorkers(k.runs) {
		if slices.Contains(live, i) {
			out = append(out, i)
		}
	}
	return out
}

// hasJoined reports whether p has logged joining its consumer group since
// its last (re)start (see waitJoined).
func hasJoined(p *proc) bool { return memberID(p) != "" }

// joinedAs matches kafka-go's log line on joining a group.
var joinedAs = regexp.MustCompile(`(?i)joined group \S+ as member (\S+) in generation`)

// memberID is the group member id p last joined as since its last
// (re)start, or "" when it has not joined.
func memberID(p *proc) string {
	log := p.log()
	if i := strings.LastIndex(log, "==== start "); i >= 0 {
		log = log[i:]
	}
	all := joinedAs.FindAllStringSubmatch(log, -1)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1][1]
}

// busyWorkers lists the indexes (in f.workerProcs) of workers that hold a
// running attempt of one of runs.
func (f *faultStack) busyWorkers(runs []string) []int {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	seen := map[int]bool{}
	var out []int
	for _, id := range runs {
		st, err := f.keys.LoadRun(ctx, f.rdb, id)
		if err != nil {
			continue
		}
		for _, raw := range st.Nodes {
			rec, err := runstate.DecodeNodeRecord([]byte(raw))
			if err != nil || rec.State != runstate.NodeRunning {
				continue
			}
			if i := slices.Index(f.Workers, rec.Worker); i >= 0 && !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}
