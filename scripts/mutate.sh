#!/usr/bin/env bash
# Mutation check of the critical paths (make mutate; CI runs it): applies
# one one-line mutation at a time, runs the tests that guard that line, and
# reports every mutation no test catches. A surviving mutation must be killed
# by a new test or explained in DESIGN.md ("Mutation check").
#
# The mutations are applied to copies of the working tree as it is (local
# changes included), never to the tree itself: MUTATE_JOBS copies ("lanes",
# 2 by default) each take the next entry of the list, apply it, run its tests
# and put the file back. Many of the tests wait on timers and
# processes more than they compute, so two lanes on two cores took about
# two-thirds of the time of one (534 s against 789 s for 81 entries). The lanes live in .braid/mutate (MUTATE_DIR), the
# same paths every time, so a second run finds its builds in Go's cache.
#
# Each entry: file | text to find (every occurrence is replaced) | replacement | module | package | -run regex
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${MUTATE_JOBS:-2}

mutations=$(cat <<'LIST'
pkg/statestore/claim.go|if at ~= want then return -2 end||pkg|./statestore|Claim\|Conformance
pkg/statestore/claim.go|if at < want then return -5 end||pkg|./statestore|Claim\|Conformance
pkg/statestore/claim.go|if tostring(r.a or 0) ~= ARGV[2] then return -2 end||pkg|./statestore|Claim\|Conformance
pkg/worker/settle.go|case res[in.claim].Result == statestore.ClaimAhead:|case false:|pkg|./worker|SettleDispatchAhead
pkg/worker/settle.go|	case res == statestore.ClaimOK && in.again && w.inflight.has(in.id):|	case res == statestore.ClaimOK && in.again:|pkg|./worker|^TestAttemptWhoseResultWasLostRunsAgain$
pkg/worker/settle.go|in.again = w.recent.has(in.id, in.fp)|in.again = false|pkg|./worker|^TestAttemptWhoseResultWasLostRunsAgain$
pkg/worker/settle.go|in.again && w.recent.leftWithin(in.id, in.fp, time.Now(), in.ttl):|in.again && false:|pkg|./worker|^TestAttemptWhoseResultWasLostRunsAgain$
pkg/worker/recent.go|if old := r.ring[i]; r.at[old.fp] == int32(i) {|if old := r.ring[i]; true {|pkg|./worker|^TestRecentSurvivesFingerprintCollisions$
pkg/worker/recent.go|if !ok \|\| r.ring[i].id != a {|if !ok {|pkg|./worker|^TestRecentSurvivesFingerprintCollisions$
pkg/worker/outbox.go|it.result.Error = strings.ToValidUTF8(it.result.GetError(), "\uFFFD")|it.result.Error = strings.Clone(it.result.GetError())|pkg|./worker|^TestHandlerFailures$
pkg/eventbus/message.go|if f, ok := m.(fastMarshaler); ok && f.Conforms() {|if f, ok := m.(fastMarshaler); ok {|pkg|./eventbus|^TestNewMessageRefusesStringsNotUTF8$
services/orchestrator/orchsvc/batch.go|return s.tryBatchAhead(ctx, msgs, true)|return s.tryBatchAhead(ctx, msgs, false)|services/orchestrator|./orchsvc|DispatchBesideTheWrite
services/api/apisvc/runwait.go|	if st == nil \|\| !st.Exists() {|	if true {|services/api|./apisvc|RunWaitAnsweredFromTheAnnouncedRun
pkg/eventbus/dial.go|c.stop = context.AfterFunc(ctx, func() { _ = conn.Close() })|c.stop = func() bool { return false }|pkg|./eventbus|RebalanceDoesNotWaitOutTheLongPoll
cmd/braid/internal/devstack/services.go|Dial: inf.brokerLn.Dial}|Dial: nil}|e2e|.|^TestDevRestartKeepsState$
cmd/braid/internal/cli/dev.go|return max(1, cpus/2)|return max(1, cpus)|cmd/braid|./internal/cli|^TestDevProcs$
cmd/braid/internal/cli/dev.go|		runtime.GOMAXPROCS(floor)|		_ = floor|e2e|.|^TestDevMetrics$
cmd/braid/internal/autoprocs/autoprocs.go|		if buckets[i] >= late {|		if buckets[i] >= 1000*late {|cmd/braid|./internal/autoprocs|^TestRunFollowsTheLoad$
cmd/braid/internal/autoprocs/autoprocs.go|	case procs > lo && d.down >= DownWindows:|	case false:|cmd/braid|./internal/autoprocs|^TestRunFollowsTheLoad$
services/api/apisvc/tasks.go|	if max <= 0 \|\| len(t.Output) <= max {|	if true {|services/api|./apisvc|^TestFanOutViews$
services/api/apisvc/tasks.go|	for n > 0 && !utf8.RuneStart(t.Output[n]) {|	for false {|services/api|./apisvc|^TestTaskOutputCutKeepsUTF8Whole$
cmd/braid/internal/cli/dev.go|		debug.SetGCPercent(pct)|		_ = pct|e2e|.|^TestDevMetrics$
pkg/worker/lazylog.go|l.h = l.parent.WithAttrs(l.attrs)|l.h = l.parent|pkg|./worker|^TestLazyAttrs
pkg/eventbus/tail.go|if err := r.SetOffset(off); err != nil {|if err := r.SetOffset(kafka.FirstOffset); err != nil {|pkg|./eventbus|^TestTailReadsWhatFollowsOpen$
services/api/apisvc/events_feed.go|if f.users > 0 \|\| f.cur == nil \|\| f.stopped {|if f.cur == nil \|\| f.stopped {|services/api|./apisvc|^TestFeedReadsOnlyWhileWatched$
services/api/apisvc/events_sse.go|	err = s.feed.acquire(actx)|	_, err = actx, error(nil)|services/api|./apisvc|^TestRunEvents
pkg/statestore/claim.go|if r.s ~= 'queued' and r.s ~= 'running' then return -3 end||pkg|./statestore|Claim\|Conformance
pkg/statestore/claim.go|case isScriptFailure(err) && len(call) > 1:|case false:|pkg|./statestore|^TestClaimAttemptsIsolatesCorruptRecords$
pkg/statestore/claim.go|out[call[j]] = Claimed|out[call[0]] = Claimed|pkg|./statestore|^TestClaimAttemptsAnswerAsClaimAttempt$
pkg/statestore/claim.go|len(calls[c]) == claimsPerCall|len(calls[c]) > claimsPerCall|pkg|./statestore|^TestClaimCallsGroupByRunAndBound$
pkg/devinfra/devbroker/deadline.go|if t.IsZero() \|\| (d.armed && !t.Before(d.armedAt)) {|if t.IsZero() \|\| d.armed {|pkg|./devinfra/devbroker|^TestLazyDeadline
pkg/devinfra/devbroker/deadline.go|d.passed = false|d.passed = true|pkg|./devinfra/devbroker|^TestLazyDeadline
pkg/statestore/run.go|from = last + 1|from = last + 2|pkg|./statestore|^TestWriteManyInCalls$
pkg/statestore/run.go|if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('GET', KEYS[#KEYS]) ~= ARGV[#ARGV] then return 0 end||pkg|./statestore|.
pkg/statestore/run.go| or redis.call('GET', KEYS[#KEYS]) ~= ARGV[#ARGV] then return 0 end| then return 0 end|pkg|./statestore|Conformance
services/orchestrator/orchsvc/effects.go|Fence: g.o.fence, Lock: g.o.lock,|Fence: g.o.fence,|services/orchestrator|./orchsvc|Optimistic
services/orchestrator/core/result.go|if n.Attempt != e.Attempt \|\| !n.State.InFlight() {|if !n.State.InFlight() {|services/orchestrator|./core|.
services/orchestrator/core/fanout_instance.go|if rec == nil \|\| rec.Attempt != e.Attempt \|\| !rec.State.InFlight() {|if rec == nil \|\| !rec.State.InFlight() {|services/orchestrator|./core|.
services/orchestrator/core/result.go|n.Attempt < n.MaxAttempt(node.Retry.Attempts())|n.Attempt <= n.MaxAttempt(node.Retry.Attempts())|services/orchestrator|./core|.
services/orchestrator/core/fanout_instance.go|rec.Attempt < rec.MaxAttempt(node.Retry.Attempts())|rec.Attempt <= rec.MaxAttempt(node.Retry.Attempts())|services/orchestrator|./core|.
services/orchestrator/core/control.go|Attempt: n.Attempt, AttemptBase: n.Attempt,|Attempt: n.Attempt,|services/orchestrator|./core|^TestRetryControlStartsAFreshAttemptBudget$
services/api/apisvc/runs_get.go|MaxAttempts: rec.MaxAttempt(n.Retry.Attempts()),|MaxAttempts: n.Retry.Attempts(),|services/api|./apisvc|^TestMaxAttemptsCountsOnAfterAReset$
services/orchestrator/core/result.go|node.Retry.Delay(n.Attempt-n.AttemptBase,|node.Retry.Delay(n.Attempt,|services/orchestrator|./core|^TestRetryControlStartsAFreshAttemptBudget$
services/orchestrator/core/fanout_instance.go|node.Retry.Delay(rec.Attempt-rec.AttemptBase,|node.Retry.Delay(rec.Attempt,|services/orchestrator|./core|^TestFanOutInstanceFailure$
services/orchestrator/core/fanout_control.go|return records.FanOutCounts{InstanceBase: high, InstanceHigh: high}|return records.FanOutCounts{InstanceHigh: high}|services/orchestrator|./core|^TestFanOutInstanceFailure$\|^TestPropertyRandomDAGs$
services/orchestrator/core/fanout_instance.go|	n.InstanceHigh = max(n.InstanceHigh, rec.Attempt)|	_ = n.InstanceHigh|services/orchestrator|./core|^TestFanOutInstanceFailure$
services/orchestrator/core/fanout.go|Count: count, InstanceBase: n.InstanceBase, InstanceHigh: n.InstanceHigh}|Count: count}|services/orchestrator|./core|^TestFanOutInstanceFailure$\|^TestPropertyRandomDAGs$
services/orchestrator/core/fanout_control.go|rec.Error, rec.Reason, rec.FinishedAt, rec.AttemptBase = "", "", 0, rec.Attempt|rec.Error, rec.Reason, rec.FinishedAt = "", "", 0|services/orchestrator|./core|^TestFanOutInstanceFailure$
services/orchestrator/core/ready.go|done := r.Nodes[i].ParentsLeft == 0|done := r.Nodes[i].ParentsLeft <= 1|services/orchestrator|./core|.
services/orchestrator/core/ready.go|		if c.succeeded > 0 {|		if c.succeeded >= 0 {|services/orchestrator|./core|.
services/orchestrator/core/control.go|	r.stopAll(records.NodeCancelled, reason, e.Now, eff)||services/orchestrator|./core|.
services/orchestrator/core/lost.go|if n.Lost >= e.maxLost() {|if n.Lost > e.maxLost() {|services/orchestrator|./core|.
pkg/handler/egress_dial.go|, ControlContext: g.control}|}|pkg|./handler|Egress
pkg/handler/egress_dial.go|(class == classLoopback && g.loopback)|(class == classLoopback)|pkg|./handler|Egress\|GuardCheck
pkg/template/shell.go|return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"|return "'" + s + "'"|pkg|./template|.
pkg/worker/settle.go|	case res != statestore.ClaimOK:|	case false:|e2e|.|^TestFaultDuplicatedDispatches$
services/orchestrator/orchsvc/write.go|if g.o == nil \|\| !g.o.loaded {|if true {|services/orchestrator|./orchsvc|CrashAfterTheWrite
services/orchestrator/orchsvc/apply.go|return statestore.ClaimFact{State: statestore.ClaimLive}|return statestore.ClaimFact{State: statestore.ClaimNone}|services/orchestrator|./orchsvc|ReconcileEvent
services/orchestrator/orchsvc/publish.go| \|\| bigStart(g) \|\|| \|\||services/orchestrator|./orchsvc|^TestBigStartDispatchesAfterTheWrite$
services/orchestrator/orchsvc/publish.go| \|\| len(g.eff.Orphans) > 0 {| {|services/orchestrator|./orchsvc|^TestLostAttemptDispatchesAfterTheWrite$
pkg/worker/settle.go|a.firstBeat = time.AfterFunc(w.beatEvery(ttl), func() {|a.firstBeat = time.AfterFunc(time.Hour, func() {|pkg|./worker|^TestHeartbeatFollowsShortHeartbeatTimeout$
pkg/jsonstr/jsonstr.go|html[c] = plain[c] && c != '<' && c != '>' && c != '&'|html[c] = plain[c] && c != '>' && c != '&'|pkg|./records|^TestNodeRecordEncode
services/orchestrator/orchsvc/runcache.go|		if !ok { // never changed since the run began|		if !ok && false { // never changed since the run began|services/orchestrator|./orchsvc|^TestStartWritesOnlyTheRecordsItChanged$
services/orchestrator/orchsvc/effects.go|	if stale := disarmed(r, g.write.Ended, ended); len(stale) > 0 {|	if stale := disarmed(r, g.write.Ended, ended); false {|services/orchestrator|./orchsvc|^TestEndedAttemptsDisarmTheirTimers$
services/orchestrator/orchsvc/timers.go|		if err != nil \|\| !full \|\| time.Since(start) >= s.cfg.TimerPoll {|		if true {|services/orchestrator|./orchsvc|^TestTimerPollDrainsABurst$
pkg/devinfra/devbroker/segments.go|			createSegments(dataDir, t.Topic, n)|			_ = n|pkg|./devinfra/devbroker|^TestPrepareSegmentsAreTheFilesKfakeWrites$
services/orchestrator/orchsvc/maintenance.go|	for sw.active() && sw.credit >= 1 {|	for sw.active() {|services/orchestrator|./orchsvc|^TestReconcilePass
services/orchestrator/orchsvc/maintenance.go|		sw.again = true|		sw.begin(time.Now())|services/orchestrator|./orchsvc|^TestReconcilePassRequests$
services/orchestrator/orchsvc/busy.go|	case reconciles(g) && !r.Busy():|	case false:|services/orchestrator|./orchsvc|^TestBusyIndexFollowsTheRun$
services/orchestrator/orchsvc/busy.go| \|\| (o.loaded && r.Busy())):|):|services/orchestrator|./orchsvc|CrashAfterTheWrite
services/orchestrator/orchsvc/effects.go|		pipe.ZRem(ctx, s.keys.BusyRunsOf(g.run), g.run)||services/orchestrator|./orchsvc|^TestBusyIndexFollowsTheRun$
services/orchestrator/orchsvc/maintenance.go|func allRate(rate int) int { return max(1, rate/4) }|func allRate(rate int) int { return max(1, rate) }|services/orchestrator|./orchsvc|^TestBusyRunsAreReconciledFirst$
services/orchestrator/orchsvc/batch.go| \|\| idleReconcile(g) {| {|services/orchestrator|./orchsvc|^TestIdleReconcileLetsItsLockGo$
services/orchestrator/orchsvc/batch.go|	if !g.acquired \|\| g.o.run == nil|	if g.o.run == nil|services/orchestrator|./orchsvc|^TestIdleReconcileLetsItsLockGo$
services/api/apisvc/runs_list.go|	case f.unfinishedOnly():|	case false:|services/api|./apisvc|^TestListUnfinishedRunsBehindManyFinished$
services/api/apisvc/runs_list.go|		size = max(size, runScanBatch)|		size = max(size, 0)|services/api|./apisvc|^TestListUnfinishedRunsBehindManyFinished$
pkg/eventbus/consumer.go|		WatchPartitionChanges:  true,|		WatchPartitionChanges:  false,|pkg|./eventbus|^TestGroupConsumesPartitionsAddedLater$
pkg/eventbus/tail.go|	t.pumps.Go(func() { t.watch(pumpCtx) })|	_ = t.watch|pkg|./eventbus|^TestTailReadsPartitionsAddedLater$
pkg/eventbus/producer.go|	if len(offsets) > 0 {|	if false && len(offsets) > 0 {|pkg|./eventbus|^TestPrepareLeavesPublishNothingToLookUp$
services/orchestrator/orchsvc/config.go|	c.Bus.FetchBuffer = cmp.Or(c.Bus.FetchBuffer, c.BatchMax)|	c.Bus.FetchBuffer = cmp.Or(c.Bus.FetchBuffer, 0)|services/orchestrator|./orchsvc|^TestConsumerPrefetchesABatch$
pkg/eventbus/fetch.go|		if r.held == 0 \|\| r.held+n <= r.max {|		if true {|pkg|./eventbus|^TestRoomBoundsBytes$\|^TestPrefetchBytesBoundsABatch$
pkg/eventbus/fetch.go|	defer func() { p.room.give(bytes) }()|	_ = bytes|pkg|./eventbus|^TestRoomBoundsBytes$\|^TestPrefetchBytesBoundsABatch$
pkg/eventbus/fetch.go|		r.waiting = true|		_ = true|pkg|./eventbus|^TestRoomBoundsBytes$
pkg/statestore/ended.go|if ARGV[5] == '1' and redis.call('PUBSUB', 'NUMSUB', ARGV[1])[2] == 0 then return 0 end||pkg|./statestore|EndedNoticeOnlyWhenHeard
services/orchestrator/orchsvc/write.go|s.keys.QueueEnded(ctx, pipe, g.run, !s.clustered())|s.keys.QueueEnded(ctx, pipe, g.run, false)|services/orchestrator|./orchsvc|ClusterNoticesFollowTheirWrite
services/api/apisvc/endings.go|	if !e.isSub \|\| e.n > 0 \|\| now.Sub(e.lastLeft) < e.linger {|	if true {|services/api|./apisvc|RunWaitSubscribesOnlyWhileWaiting
services/orchestrator/orchsvc/effects.go|if o := r.Outputs[i]; records.StoresOutput(o) {|if o := r.Outputs[i]; true {|services/orchestrator|./orchsvc|^TestNullOutputIsNotStored$
services/orchestrator/orchsvc/runcache.go|outputs[i] = records.OutputOf(nodes[i].State, o, ok)|outputs[i] = records.OutputOf(records.NodePending, o, ok)|services/orchestrator|./orchsvc|^TestNullOutputIsNotStored$
services/api/apisvc/tasks.go|t.Output = records.OutputOf(r.nodes[i].State, out, ok)|t.Output = records.OutputOf(records.NodePending, out, ok)|services/api|./apisvc|^TestNullOutputsReadAsNull$
services/api/apisvc/tasks.go|rows[j].Output = records.OutputOf(rec.State, outs[j], outs[j] != "")|rows[j].Output = records.OutputOf(records.NodePending, outs[j], outs[j] != "")|services/api|./apisvc|^TestNullOutputsReadAsNull$
services/orchestrator/orchsvc/fanout.go|		if records.StoresOutput(o) {|		if true {|services/api|./apisvc|^TestNullOutputsReadAsNull$
services/api/apisvc/runload.go|return s.readRun(ctx, id, s.keys.LoadRunView)|return s.readRun(ctx, id, s.keys.LoadRun)|services/api|./apisvc|^TestRunViewsReadNoOutputs$
services/api/apisvc/tasks.go|s.tasksFor(c, id, err)|s.runFor(c, id, err)|services/api|./apisvc|^TestFanOutViews$
pkg/statestore/prune.go|if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end||pkg|./statestore|^TestConformance$/^PruneDeletesEveryKeyOfAnEndedRun$
pkg/statestore/prune.go|if not fin or fin <= 0 or fin > tonumber(ARGV[1]) then return 0 end|if not fin then return 0 end|pkg|./statestore|^TestConformance$/^PruneDeletesEveryKeyOfAnEndedRun$
pkg/statestore/prune.go|k.Items(run, node))|k.Items(run, node)+"x")|pkg|./statestore|^TestConformance$/^PruneDeletesEveryKeyOfAnEndedRun$
services/orchestrator/orchsvc/prune.go|				p.skip++|				_ = 0|services/orchestrator|./orchsvc|^TestPruneStepDeletesRunsPastTheRetention$
services/api/apisvc/runs_delete.go|		if time.Now().Add(pause).After(deadline) {|		if _ = deadline; true {|services/api|./apisvc|^TestDeleteRun$
pkg/statestore/reindex.go|		if targets[ik.key] {|		if false && targets[ik.key] {|pkg|./statestore|^TestReindex$
pkg/statestore/reindex.go|		{k.TimerShards(), func(n Keys, m string) string {|		{nil, func(n Keys, m string) string {|pkg|./statestore|^TestReindex$
pkg/statestore/layout.go|	if to := moving.Val(); to != "" {|	if to := moving.Val(); false {|pkg|./statestore|^TestReindex$
services/orchestrator/orchsvc/runlocks.go|		if ls.pending {|		if false && ls.pending {|services/orchestrator|./orchsvc|^TestLeasesPendingAndLetGoLocksAreNotLost$
services/orchestrator/orchsvc/runlocks.go|		if l.m[hl.Run] != kept[hl.Run] {|		if false {|services/orchestrator|./orchsvc|^TestLeasesPendingAndLetGoLocksAreNotLost$
services/api/apisvc/endings.go|if status == "" \|\| records.RunStatus(status).Terminal() {|if records.RunStatus(status).Terminal() {|services/api|./apisvc|^TestEndingsRecheck$
services/api/apisvc/endings.go|case err != nil && !failing && ctx.Err() == nil:|case err != nil && ctx.Err() == nil:|services/api|./apisvc|^TestEndingsRecheck$
pkg/worker/settle.go|if _, ok := w.cfg.Handlers[in.d.GetHandler()]; !ok {|if false {|pkg|./worker|^TestPoolsRunOnlyTheirOwnHandlers$
pkg/worker/config.go|if slices.Equal(names, BuiltinHandlers) {|if true {|pkg|./worker|^TestGroupFor$
pkg/worker/config.go|names = slices.Compact(names)|names = names[:len(names):len(names)]|pkg|./worker|^TestGroupFor$
cmd/braid/internal/cli/apply.go|err != nil \|\| !bytes.Equal(local, stored)|err != nil \|\| !bytes.Equal(local, stored) \|\| !bytes.Equal(def, doc.Definition)|cmd/braid|./internal/cli|^TestApplyUnchangedRegistersNothing$
cmd/braid/internal/cli/files.go|strings.HasSuffix(e.Name(), ".json")|strings.HasSuffix(e.Name(), "")|cmd/braid|./internal/cli|^TestDefinitionDirectories$
pkg/eventbus/route.go|if len(p.sizes) == 0 \|\| p.planned+size > maxRequestBytes {|if len(p.sizes) == 0 \|\| p.planned+size >= maxRequestBytes {|pkg|./eventbus|^TestPlannedChunksAreAllocatedOnce$
LIST
)

work=$(mktemp -d "${TMPDIR:-/tmp}/braid-mutate.XXXXXX")
trap 'rm -rf "$work"' EXIT
# MUTATE_ONLY (a grep -E pattern) keeps the entries it matches, e.g. MUTATE_ONLY=claim.go.
mapfile -t entries < <(printf '%s\n' "$mutations" | grep -v '^$' | grep -E -- "${MUTATE_ONLY:-.}")
echo "mutation check: ${#entries[@]} entries in $jobs lanes"

# Every lane gets the files git tracks or would add (what CI's clean clone has,
# plus local edits and new files), not .git or ignored build output.
git ls-files -z -co --exclude-standard > "$work/files"
lanes=${MUTATE_DIR:-$root/.braid/mutate}
for ((l = 0; l < jobs; l++)); do
  rm -rf "$lanes/lane$l" && mkdir -p "$lanes/lane$l"
  tar --null --ignore-failed-read -T "$work/files" -cf - 2>/dev/null | tar -xf - -C "$lanes/lane$l"
done
echo 0 > "$work/next"

# take prints the index of the next entry to run, or nothing when none is left.
take() {
  (
    flock 9
    i=$(<"$work/next")
    if [ "$i" -lt "${#entries[@]}" ]; then echo $((i + 1)) > "$work/next"; echo "$i"; fi
  ) 9>"$work/lock"
}

lane() {
  local dir=$lanes/lane$1 i line file from to mod pkg run label t0 verdict
  while i=$(take) && [ -n "$i" ]; do
    line=${entries[$i]}
    # Split on unescaped '|' ("\|" stands for a literal bar).
    IFS=$'\x1f' read -r file from to mod pkg run < <(printf '%s\n' "$line" | sed 's/\\|/\x1e/g; s/|/\x1f/g; s/\x1e/|/g')
    label="$file: '${from}' → '${to}'"
    cp "$dir/$file" "$work/orig$1"
    if ! FROM=$from TO=$to perl -0pi -e '$n = s/\Q$ENV{FROM}\E/$ENV{TO}/g; die "not found\n" unless $n' "$dir/$file" 2>/dev/null; then
      cp "$work/orig$1" "$dir/$file"
      echo "NOT FOUND $label" > "$work/result.$i"
      continue
    fi
    t0=$SECONDS
    if (cd "$dir/$mod" && go test -count=1 -timeout 10m -run "$run" "$pkg" >/dev/null 2>&1); then
      verdict=SURVIVED
    else
      verdict="killed  "
    fi
    cp "$work/orig$1" "$dir/$file"
    echo "$verdict  $label ($((SECONDS - t0)) s)" > "$work/result.$i"
  done
}

pids=()
for ((l = 0; l < jobs; l++)); do lane "$l" & pids+=($!); done
# A lane that died leaves its entries "NOT RUN" below, which fails the check.
for p in "${pids[@]}"; do wait "$p" || true; done

killed=0; survived=0; missing=0
for ((i = 0; i < ${#entries[@]}; i++)); do
  r=$(cat "$work/result.$i" 2>/dev/null || echo "NOT RUN   ${entries[$i]}")
  echo "$r"
  case $r in
    killed*) killed=$((killed + 1)) ;;
    SURVIVED*) survived=$((survived + 1)) ;;
    *) missing=$((missing + 1)) ;;
  esac
done
echo "mutation check: $killed killed, $survived survived, $missing not applied"
[ "$survived" -eq 0 ] && [ "$missing" -eq 0 ]
