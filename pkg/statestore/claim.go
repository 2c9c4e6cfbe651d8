package statestore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClaimResult is the outcome of a claim or heartbeat.
type ClaimResult int

// Claim outcomes. Only ClaimOK lets a worker execute (or keep executing) an attempt.
const (
	// ClaimOK: this worker owns the attempt, claimed now; execute it
	// (heartbeat: keep going).
	ClaimOK ClaimResult = 1
	// ClaimMine: this worker already held the claim: its own earlier claim
	// call whose answer it never read (execute, unless it did), or a
	// duplicate dispatch of an attempt it claimed (drop). Only a claim
	// answers it; a heartbeat answers ClaimOK.
	ClaimMine ClaimResult = 2
	// ClaimTaken: another worker owns the attempt; drop the dispatch.
	ClaimTaken ClaimResult = 0
	// ClaimUnknown: the run or node record does not exist (run deleted); drop.
	ClaimUnknown ClaimResult = -1
	// ClaimStale: the node moved on to another attempt; drop (heartbeat: stop).
	ClaimStale ClaimResult = -2
	// ClaimFinished: the node is not in flight (terminal, cancelled, waiting); drop (heartbeat: stop).
	ClaimFinished ClaimResult = -3
	// ClaimCorrupt: the claim script failed on the attempt's records (an
	// undecodable node record, a key of the wrong type): the dispatch is
	// poison. Only ClaimAttempts answers it, with the script's error.
	ClaimCorrupt ClaimResult = -4
	// ClaimAhead: no record names the attempt yet (the node's, or its
	// instance's, record is missing or at an earlier attempt). The
	// orchestrator publishes a dispatch beside the write that queues its
	// attempt, so the dispatch can arrive first: claim again shortly, and
	// drop the dispatch if its attempt is still not stored after a while
	// (that write failed, and the events behind it are applied again).
	// Only a claim answers it; a heartbeat answers ClaimUnknown or
	// ClaimStale.
	ClaimAhead ClaimResult = -5
)

// String names the outcome for logs.
func (c ClaimResult) String() string {
	switch c {
	case ClaimOK:
		return "ok"
	case ClaimMine:
		return "mine"
	case ClaimTaken:
		return "taken"
	case ClaimUnknown:
		return "unknown"
	case ClaimStale:
		return "stale"
	case ClaimFinished:
		return "finished"
	case ClaimCorrupt:
		return "corrupt"
	case ClaimAhead:
		return "ahead"
	}
	return "invalid"
}

// claimScript claims one attempt for a worker.
//
//	KEYS[1] nodes hash   KEYS[2] claim key   KEYS[3] the node's instances hash
//	ARGV[1] node id   ARGV[2] attempt   ARGV[3] worker id   ARGV[4] ttl ms   ARGV[5] instance
//	returns 1 claimed, 2 already this worker's, 0 taken by another worker,
//	-5 no record names the attempt yet (missing, or at an earlier attempt),
//	-2 the record is at a later attempt, -3 node not in flight.
//
// A node record with "fo" set is a fan-out node: the attempt is checked
// against the instance's own record in KEYS[3] instead.
// Idempotent: a retry by the same worker finds its own claim and returns 2,
// which tells it from a fresh claim: a worker that already ran the attempt
// drops a duplicate dispatch on 2, but runs the attempt again on 1 (nobody
// held it: the attempt was queued again without its result being stored).
var claimScript = redis.NewScript(findRecord + claimFunc + `
return claim(ARGV[3], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[4], ARGV[5])
`)

// claimsScript is claimScript for several attempts of one run at once (one
// slot): the same steps for each attempt in turn, each answer its own, in
// one call instead of one per attempt — a 10,000-node fan-out's claims cost
// Redis about 40 % less CPU so (the parsing of 10,000 commands of eight
// arguments each, and their replies).
//
//	KEYS[1] nodes hash, then for attempt i (from 1): KEYS[2i] its claim key, KEYS[2i+1] its node's instances hash
//	ARGV[1] worker id, then for attempt i: ARGV[4i-2] node id, ARGV[4i-1] attempt, ARGV[4i] ttl ms, ARGV[4i+1] instance
//	returns claimScript's answer for each attempt, in order
//
// A record that makes an attempt's steps fail (undecodable, a key of the
// wrong type) fails the whole call, the claims before it stored: ClaimAttempts
// then claims that call's attempts one by one, which finds those claims its
// own and tells the bad record from the good.
var claimsScript = redis.NewScript(findRecord + claimFunc + `
local out = {}
for i = 1, (#KEYS - 1) / 2 do
  out[i] = claim(ARGV[1], KEYS[2 * i], KEYS[2 * i + 1], ARGV[4 * i - 2], ARGV[4 * i - 1], ARGV[4 * i], ARGV[4 * i + 1])
end
return out
`)

// heartbeatScript keeps a claim alive and tells the worker whether to go on.
//
//	KEYS and ARGV as claimScript
//	returns 1 keep going, 0 another worker holds the claim, -1/-2/-3 as claimScript: stop.
//
// A claim that expired while the attempt is still current is taken again.
var heartbeatScript = redis.NewScript(findRecord + `
local r = find(KEYS[1], KEYS[3], ARGV[1], ARGV[5])
if not r then return -1 end
if tostring(r.a or 0) ~= ARGV[2] then return -2 end
if r.s ~= 'queued' and r.s ~= 'running' then return -3 end
local holder = redis.call('GET', KEYS[2])
if holder == ARGV[3] then
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  return 1
end
if not holder then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
  return 1
end
return 0
`)

// findRecord defines find(nodes, instances, node, instance), the opening of
// the claim and heartbeat scripts: it returns the decoded record the attempt
// belongs to (the node's, or its fan-out instance's), or nil when there is
// none.
const findRecord = `
local function find(nodes, instances, node, inst)
  local rec = redis.call('HGET', nodes, node)
  if not rec then return nil end
  local r = cjson.decode(rec)
  if r.fo then
    rec = redis.call('HGET', instances, inst)
    if not rec then return nil end
    r = cjson.decode(rec)
  end
  return r
end
`

// claimFunc defines claim(worker, claimKey, instances, node, attempt, ttl,
// instance), claimScript's steps for one attempt, with the nodes hash in
// KEYS[1].
const claimFunc = `
local nodes = KEYS[1]
local function claim(worker, claimKey, instances, node, attempt, ttl, inst)
  local r = find(nodes, instances, node, inst)
  if not r then return -5 end
  local at, want = tonumber(r.a or 0), tonumber(attempt)
  if at < want then return -5 end
  if at ~= want then return -2 end
  if r.s ~= 'queued' and r.s ~= 'running' then return -3 end
  if redis.call('SET', claimKey, worker, 'NX', 'PX', ttl) then return 1 end
  if redis.call('GET', claimKey) == worker then return 2 end
  return 0
end
`

// Attempt names one attempt of one node instance of one run.
type Attempt struct {
	Run      string
	Node     string
	Instance int
	Attempt  int
}

// String formats the attempt for logs and errors.
func (a Attempt) String() string {
	return fmt.Sprintf("run=%s node=%s inst=%d attempt=%d", a.Run, a.Node, a.Instance, a.Attempt)
}

// ClaimAttempt tries to make worker the only executor of the attempt, holding the
// claim for ttl unless refreshed by Heartbeat.
func (k Keys) ClaimAttempt(ctx context.Context, rdb redis.Scripter, a Attempt, worker string, ttl time.Duration) (ClaimResult, error) {
	return k.runClaimScript(ctx, rdb, claimScript, a, worker, ttl)
}

// Heartbeat refreshes the worker's claim on the attempt; any result other
// than ClaimOK means the worker must stop executing it.
func (k Keys) Heartbeat(ctx context.Context, rdb redis.Scripter, a Attempt, worker string, ttl time.Duration) (ClaimResult, error) {
	return k.runClaimScript(ctx, rdb, heartbeatScript, a, worker, ttl)
}

// ClaimRequest is one attempt a worker wants to claim, held for TTL.
type ClaimRequest struct {
	Attempt Attempt
	TTL     time.Duration
}

// Claimed is ClaimAttempts' answer for one attempt.
type Claimed struct {
	Result ClaimResult
	// Problem is the script's error when Result is ClaimCorrupt.
	Problem string
}

// ClaimAttempts claims every attempt of reqs for worker in one pipelined
// round trip: the claim script's steps once per attempt, so each claim
// stays atomic on its own and the batch costs one round trip instead of one
// per attempt. Attempts of one run go in one call of claimsScript (up to
// claimsPerCall a call). The i-th answer is reqs[i]'s. An attempt whose records make the script
// fail answers ClaimCorrupt, and the others are still claimed (a call of
// several that fails is repeated one attempt a call, in a second round
// trip): one bad record must not hold up a batch for ever. On error no
// answer is known and the whole call may be repeated: a claim already
// stored for worker answers ClaimMine. A server that lost its script
// cache (NOSCRIPT) gets the scripts loaded once and the pipeline re-sent.
func (k Keys) ClaimAttempts(ctx context.Context, rdb redis.Cmdable, reqs []ClaimRequest, worker string) ([]Claimed, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	out, err := k.claimRounds(ctx, rdb, reqs, worker)
	if IsNoScript(err) {
		for _, s := range []*redis.Script{claimScript, claimsScript} {
			if lerr := s.Load(ctx, rdb).Err(); lerr != nil {
				return nil, fmt.Errorf("claim %d attempts: reload script: %w", len(reqs), lerr)
			}
		}
		out, err = k.claimRounds(ctx, rdb, reqs, worker)
	}
	return out, err
}

// claimsPerCall bounds the attempts of one claimsScript call: 32 hold Redis
// for about 0.3 ms, less than an apply of a large batch.
const claimsPerCall = 32

// claimRounds claims reqs in calls grouped by run, then one by one those of
// a grouped call that failed on a record.
func (k Keys) claimRounds(ctx context.Context, rdb redis.Cmdable, reqs []ClaimRequest, worker string) ([]Claimed, error) {
	out := make([]Claimed, len(reqs))
	retry, err := k.claimPipeline(ctx, rdb, reqs, claimCalls(reqs), worker, out)
	if err != nil || len(retry) == 0 {
		return out, err
	}
	one := make([][]int, len(retry))
	for i, at := range retry {
		one[i] = []int{at}
	}
	_, err = k.claimPipeline(ctx, rdb, reqs, one, worker, out)
	return out, err
}

// claimCalls groups the indexes of reqs into calls: by run, in order of
// first appearance, at most claimsPerCall each.
func claimCalls(reqs []ClaimRequest) [][]int {
	var calls [][]int
	open := make(map[string]int, len(reqs)) // run → its call being filled
	for i, r := range reqs {
		c, ok := open[r.Attempt.Run]
		if !ok || len(calls[c]) == claimsPerCall {
			c = len(calls)
			calls = append(calls, make([]int, 0, 1))
			open[r.Attempt.Run] = c
		}
		calls[c] = append(calls[c], i)
	}
	return calls
}

// claimPipeline sends calls (indexes into reqs) in one pipeline and stores
// their answers in out; it returns the attempts of grouped calls that failed
// on a record, unanswered.
func (k Keys) claimPipeline(ctx context.Context, rdb redis.Cmdable, reqs []ClaimRequest, calls [][]int, worker string, out []Claimed) (retry []int, err error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(calls))
	for i, call := range calls {
		keys, args := k.claimsArgs(reqs, call, worker)
		cmds[i] = claimsScript.EvalSha(ctx, pipe, keys, args...)
	}
	_, execErr := pipe.Exec(ctx)
	for i, c := range cmds {
		call := calls[i]
		first := reqs[call[0]].Attempt
		err := c.Err()
		switch {
		case err == nil:
			if err := storeClaimed(out, call, c.Val()); err != nil {
				return nil, fmt.Errorf("claim %s: %w", first, err)
			}
		case isScriptFailure(err) && len(call) > 1:
			retry = append(retry, call...)
		case isScriptFailure(err):
			out[call[0]] = Claimed{Result: ClaimCorrupt, Problem: fmt.Sprintf("claim %s: %v", first, err)}
		case execErr != nil:
			return nil, fmt.Errorf("claim %d attempts (first %s): %w", len(reqs), reqs[0].Attempt, execErr)
		default:
			return nil, fmt.Errorf("claim %s: %w", first, err)
		}
	}
	return retry, nil
}

// storeClaimed stores a call's reply, one answer per attempt, as the
// answers of its attempts.
func storeClaimed(out []Claimed, call []int, reply any) error {
	list, ok := reply.([]any)
	if !ok || len(list) != len(call) {
		return fmt.Errorf("unexpected reply %T of %d answers for %d attempts", reply, len(list), len(call))
	}
	for j, v := range list {
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("unexpected answer %T", v)
		}
		out[call[j]] = Claimed{Result: ClaimResult(n)}
	}
	return nil
}

// isScriptFailure reports whether err is Redis's answer that a script
// failed on the data it read (a Lua runtime error, or a command inside it
// meeting a key of the wrong type): repeating the call fails the same way.
// NOSCRIPT, connection errors and the like are not.
func isScriptFailure(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) || IsNoScript(err) {
		return false
	}
	msg := rerr.Error()
	return strings.Contains(msg, "user_script") || strings.Contains(msg, "Error running script") ||
		strings.HasPrefix(msg, "WRONGTYPE")
}

// claimsArgs are claimsScript's KEYS and ARGV for the attempts of reqs at
// call, all of one run.
func (k Keys) claimsArgs(reqs []ClaimRequest, call []int, worker string) ([]string, []any) {
	run := reqs[call[0]].Attempt.Run
	keys := make([]string, 1, 1+2*len(call))
	keys[0] = k.Nodes(run)
	args := make([]any, 1, 1+4*len(call))
	args[0] = worker
	for _, at := range call {
		a, ttl := reqs[at].Attempt, reqs[at].TTL
		keys = append(keys, k.Claim(a.Run, a.Node, a.Instance, a.Attempt), k.Instances(a.Run, a.Node))
		args = append(args, a.Node, strconv.Itoa(a.Attempt), max(ttl.Milliseconds(), 1), InstanceField(a.Instance))
	}
	return keys, args
}

// claimArgs are the KEYS and ARGV of the claim and heartbeat scripts.
func (k Keys) claimArgs(a Attempt, worker string, ttl time.Duration) ([]string, []any) {
	keys := []string{k.Nodes(a.Run), k.Claim(a.Run, a.Node, a.Instance, a.Attempt), k.Instances(a.Run, a.Node)}
	return keys, []any{a.Node, strconv.Itoa(a.Attempt), worker, max(ttl.Milliseconds(), 1), InstanceField(a.Instance)}
}

func (k Keys) runClaimScript(ctx context.Context, rdb redis.Scripter, s *redis.Script, a Attempt, worker string, ttl time.Duration) (ClaimResult, error) {
	keys, args := k.claimArgs(a, worker, ttl)
	n, err := s.Run(ctx, rdb, keys, args...).Int()
	if err != nil {
		return ClaimTaken, fmt.Errorf("claim %s: %w", a, err)
	}
	return ClaimResult(n), nil
}

// ReleaseClaim deletes the worker's claim on the attempt if it still holds it
// (used when a stopping worker hands an attempt back).
func (k Keys) ReleaseClaim(ctx context.Context, rdb redis.Scripter, a Attempt, worker string) error {
	err := releaseScript.Run(ctx, rdb, []string{k.Claim(a.Run, a.Node, a.Instance, a.Attempt)}, worker).Err()
	if err != nil && err != redis.Nil {
		return fmt.Errorf("release claim %s: %w", a, err)
	}
	return nil
}

// releaseScript deletes KEYS[1] if its value is ARGV[1]. Returns 1 deleted, 0 not ours.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)
