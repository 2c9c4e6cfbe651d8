package statestore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// startScript is the optimistic start of a run: it takes the run's lock,
// bumps the run's fence and applies the run's first write, all in one
// atomic step, so that starting a run the orchestrator does not hold yet
// costs one round trip instead of two (acquireScript, then applyScript).
//
//	KEYS as applyScript, then the lock key last
//	ARGV as applyScript (ARGV[1], the fence, is ignored: the script takes
//	  a new one; ARGV[2] must be 1), then the lock's new value, its ttl in
//	  ms and the caller's previous value of the lock or ""
//	returns {outcome, fence}: outcome 1 applied; 0 another holder has the
//	  lock (nothing changed, fence 0); 2 the run's node records exist
//	  (the lock is taken and the fence bumped as by acquireScript, but
//	  nothing is written)
//
// The lock is taken exactly as acquireScript takes it (SET PX, then INCR of
// the fence), so the write is fenced like every other: an older holder's
// writes are refused from this step on. A replay by go-redis finds the
// lock holding its own value and the node records written: outcome 2.
var startScript = redis.NewScript(`
local lock, n = KEYS[#KEYS], #ARGV
local cur = redis.call('GET', lock)
if cur and cur ~= ARGV[n - 2] and (ARGV[n] == '' or cur ~= ARGV[n]) then return {0, 0} end
redis.call('SET', lock, ARGV[n - 2], 'PX', ARGV[n - 1])
local fence = redis.call('INCR', KEYS[1])
local lastKey = #KEYS - 1
local function done(code) return {code, fence} end
` + applyBody)

// Start outcomes (see QueueStart).
const (
	StartLocked  = 0 // another holder has the lock: nothing changed
	StartApplied = 1 // the lock is taken and the run created
	StartExists  = 2 // the lock is taken, but the run was started already: nothing written
)

// StartCmd is a queued optimistic start; read it once its pipeline has run.
type StartCmd struct {
	run string
	cmd *redis.Cmd
}

// Result is the start's outcome and, unless the outcome is StartLocked, the
// run's new fencing token (the lock is then the caller's).
func (c *StartCmd) Result() (outcome int, fence int64, err error) {
	v, err := c.cmd.Int64Slice()
	if err != nil {
		return 0, 0, fmt.Errorf("start run %s: %w", c.run, err)
	}
	if len(v) != 2 {
		return 0, 0, fmt.Errorf("start run %s: unexpected answer %v", c.run, v)
	}
	return int(v[0]), v[1], nil
}

// QueueStart adds to pipe the optimistic start of a run nobody may hold
// yet: lock l is taken with ttl (as by AcquireRuns), the fence bumped and
// w — the run's first write, with Create set; its Fence is ignored — applied
// in the same atomic step. When the lock is held elsewhere, or the run was
// started already, nothing is written and the caller takes the normal path
// (AcquireRuns, then QueueWrite).
func (k Keys) QueueStart(ctx context.Context, pipe redis.Pipeliner, w RunWrite, l LockRequest, ttl time.Duration) *StartCmd {
	w.Create = true
	keys, args := k.writeArgs(w, 3)
	keys = append(keys, k.Lock(w.Run))
	args = append(args, l.Value, max(ttl.Milliseconds(), 1), l.Prev)
	return &StartCmd{run: w.Run, cmd: startScript.EvalSha(ctx, pipe, keys, args...)}
}
