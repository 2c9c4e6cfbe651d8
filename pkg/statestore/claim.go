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
	// ClaimOK: this worker owns the attempt; execute it (heartbeat: keep going).
	ClaimOK ClaimResult = 1
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
//	returns 1 claimed (or already ours), 0 taken by another worker,
//	-5 no record names the attempt yet (missing, or at an earlier attempt),
//	-2 the record is at a later attempt, -3 node not in flight.
//
// A node record with "fo" set is a fan-out node: the attempt is checked
// against the instance's own record in KEYS[3] instead.
// Idempotent: a retry by the same worker finds its own claim and returns 1.
var claimScript = redis.NewScript(lookup(-5) + `
local at, want = tonumber(r.a or 0), tonumber(ARGV[2])
if at < want then return -5 end
if at ~= want then return -2 end
if r.s ~= 'queued' and r.s ~= 'running' then return -3 end
if redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then return 1 end
if redis.call('GET', KEYS[2]) == ARGV[3] then return 1 end
return 0
`)

// heartbeatScript keeps a claim alive and tells the worker whether to go on.
//
//	KEYS and ARGV as claimScript
//	returns 1 keep going, 0 another worker holds the claim, -1/-2/-3 as claimScript: stop.
//
// A claim that expired while the attempt is still current is taken again.
var heartbeatScript = redis.NewScript(lookup(-1) + `
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

// lookup is the opening of the claim and heartbeat scripts: it finds the
// record the attempt belongs to (the node's, or its fan-out instance's)
// and leaves it decoded in r, or returns missing when there is none.
func lookup(missing int) string {
	return fmt.Sprintf(`
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return %[1]d end
local r = cjson.decode(rec)
if r.fo then
  rec = redis.call('HGET', KEYS[3], ARGV[5])
  if not rec then return %[1]d end
  r = cjson.decode(rec)
end`, missing)
}

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
// round trip: the same claim script as ClaimAttempt, once per attempt, so
// each claim stays atomic on its own and the batch costs one round trip
// instead of one per attempt. The i-th answer is reqs[i]'s. An attempt whose
// records make the script fail answers ClaimCorrupt, and the others are
// still claimed: one bad record must not hold up a batch for ever. On
// error no answer is known and the whole call may be repeated: a claim
// already stored for worker answers ClaimOK again. A server that lost its
// script cache (NOSCRIPT) gets the script loaded once and the pipeline
// re-sent.
func (k Keys) ClaimAttempts(ctx context.Context, rdb redis.Cmdable, reqs []ClaimRequest, worker string) ([]Claimed, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	out, err := k.claimPipeline(ctx, rdb, reqs, worker)
	if IsNoScript(err) {
		if lerr := claimScript.Load(ctx, rdb).Err(); lerr != nil {
			return nil, fmt.Errorf("claim %d attempts: reload script: %w", len(reqs), lerr)
		}
		out, err = k.claimPipeline(ctx, rdb, reqs, worker)
	}
	return out, err
}

func (k Keys) claimPipeline(ctx context.Context, rdb redis.Cmdable, reqs []ClaimRequest, worker string) ([]Claimed, error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(reqs))
	for i, r := range reqs {
		keys, args := k.claimArgs(r.Attempt, worker, r.TTL)
		cmds[i] = claimScript.EvalSha(ctx, pipe, keys, args...)
	}
	_, execErr := pipe.Exec(ctx)
	out := make([]Claimed, len(reqs))
	for i, c := range cmds {
		n, err := c.Int()
		switch {
		case err == nil:
			out[i] = Claimed{Result: ClaimResult(n)}
		case isScriptFailure(err):
			out[i] = Claimed{Result: ClaimCorrupt, Problem: fmt.Sprintf("claim %s: %v", reqs[i].Attempt, err)}
		case execErr != nil:
			return nil, fmt.Errorf("claim %d attempts (first %s): %w", len(reqs), reqs[0].Attempt, execErr)
		default:
			return nil, fmt.Errorf("claim %s: %w", reqs[i].Attempt, err)
		}
	}
	return out, nil
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
