package statestore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Run locks have bsm/redislock's shape — the key Keys.Lock, set with
// SET NX PX, holding a random token followed by the holder's metadata (the
// orchestrator id), refreshed and released only by that value's owner — but
// are taken here in batches: redislock obtains one lock per call, and the
// orchestrator takes the locks of every run new to a batch, with their
// fences and state, in one pipelined round trip.

// acquireScript takes a run's lock and bumps the run's fencing counter in
// one atomic step, so the fence moves only for whoever gets the lock.
//
//	KEYS[1] lock   KEYS[2] fence
//	ARGV[1] the new value (token + metadata)   ARGV[2] ttl ms
//	ARGV[3] the caller's previous value of this lock, or ""
//	ARGV[4] a holder whose locks are taken over at once, or ""
//	ARGV[5] the token length of lock values
//	returns the new fence (≥ 1) when the lock is taken, 0 when another holder has it
//
// A lock still holding ARGV[3] is the caller's own (a lease it is about to
// let go of, or one whose run it reloads): it is taken over at once instead
// of waiting for the release. So is a lock whose holder is exactly ARGV[4]:
// the caller's own stable instance name, held by its previous incarnation
// (killed; see LockRequest.TakeOver). A replay by go-redis finds ARGV[1],
// bumps the fence once more and returns the newer value, which is the one
// the caller uses.
var acquireScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] and (ARGV[3] == '' or cur ~= ARGV[3]) then
  local n = tonumber(ARGV[5])
  if ARGV[4] == '' or #cur ~= n + #ARGV[4] or string.sub(cur, n + 1) ~= ARGV[4] then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('INCR', KEYS[2])
`)

// lockTokenBytes is the size of a lock value's random token before base64.
const lockTokenBytes = 16

// LockTokenLen is the length of the token that starts every lock value.
var LockTokenLen = base64.RawURLEncoding.EncodedLen(lockTokenBytes)

// NewLockValue returns a new lock value: 16 random bytes in base64 (as
// bsm/redislock draws them) followed by holder, so that a lock names its
// holder.
func NewLockValue(holder string) string {
	var b [lockTokenBytes]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:]) + holder
}

// refreshScript extends a lock if it still holds the holder's value.
//
//	KEYS[1] lock   ARGV[1] holder value   ARGV[2] ttl ms
//	returns 1 extended, 0 not held
var refreshScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

// HeldLock is a run lock as its holder knows it.
type HeldLock struct {
	Run   string
	Value string // token + metadata, unique to one acquisition
}

// LockRequest asks for one run's lock and its state.
type LockRequest struct {
	HeldLock
	// Prev is the caller's previous value of this lock ("" if none), taken
	// over if the lock still holds it.
	Prev string
	// TakeOver names a holder (the caller's own stable instance name) whose
	// lock is taken at once: a process restarted under the same name after a
	// kill need not wait out its predecessor's TTL. Only a name no other live
	// process uses may be given; were two to share one, each would take the
	// other's locks, and the fence would still refuse the loser's writes.
	// "" takes over nothing.
	TakeOver string
	// Light reads only whether node records exist, not the run's state:
	// enough for a run whose first event is its start (the api wrote only a
	// pending record). Acquired.NeedsLoad then says whether the run was
	// started after all (a repeated start) and must be loaded with LoadRun.
	Light bool
}

// Acquired is the answer to one LockRequest.
type Acquired struct {
	// Fence is the run's new fencing token; 0 means another holder has the
	// lock, and nothing was read.
	Fence int64
	// Stored is the run as read right after the lock was taken (empty for a
	// Light request).
	Stored StoredRun
	// NeedsLoad is set for a Light request of a run whose node records exist.
	NeedsLoad bool
}

// AcquireRuns takes the locks of reqs' runs with ttl, bumps each one's
// fence and reads each one's state, all in one pipelined round trip; the
// i-th answer is reqs[i]'s. Runs whose lock another holder has answer
// Fence 0: ask again later. A NOSCRIPT error means Redis lost its scripts:
// LoadScripts, then ask again. After any other error the outcome is
// unknown: locks may have been taken with the values sent, so ask again
// with the same values (or wait for their TTL).
func (k Keys) AcquireRuns(ctx context.Context, rdb redis.Cmdable, reqs []LockRequest, ttl time.Duration) ([]Acquired, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	type reads struct {
		fence       *redis.Cmd
		run, nodes  *redis.MapStringStringCmd
		outs        *redis.MapStringStringCmd
		nodesExists *redis.IntCmd
	}
	pipe := rdb.Pipeline()
	cmds := make([]reads, len(reqs))
	ms := max(ttl.Milliseconds(), 1)
	for i, r := range reqs {
		c := &cmds[i]
		c.fence = acquireScript.EvalSha(ctx, pipe, []string{k.Lock(r.Run), k.Fence(r.Run)}, r.Value, ms, r.Prev, r.TakeOver, LockTokenLen)
		if r.Light {
			c.nodesExists = pipe.Exists(ctx, k.Nodes(r.Run))
			continue
		}
		c.run, c.nodes, c.outs = pipe.HGetAll(ctx, k.Run(r.Run)), pipe.HGetAll(ctx, k.Nodes(r.Run)), pipe.HGetAll(ctx, k.Outputs(r.Run))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("lock %d runs (first %s): %w", len(reqs), reqs[0].Run, err)
	}
	out := make([]Acquired, len(reqs))
	for i, c := range cmds {
		fence, err := c.fence.Int64()
		if err != nil {
			return nil, fmt.Errorf("lock run %s: %w", reqs[i].Run, err)
		}
		if fence == 0 {
			continue
		}
		a := &out[i]
		a.Fence = fence
		if c.nodesExists != nil {
			a.NeedsLoad = c.nodesExists.Val() > 0
		} else {
			a.Stored = StoredRun{Fields: c.run.Val(), Nodes: c.nodes.Val(), Outputs: c.outs.Val()}
		}
	}
	return out, nil
}

// RefreshLocks extends locks to ttl in one pipelined round trip and returns
// the ones that no longer hold their value (lost: expired, or taken over).
func (k Keys) RefreshLocks(ctx context.Context, rdb redis.Cmdable, locks []HeldLock, ttl time.Duration) (lost []HeldLock, err error) {
	if len(locks) == 0 {
		return nil, nil
	}
	pipe := rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(locks))
	for i, l := range locks {
		cmds[i] = refreshScript.Eval(ctx, pipe, []string{k.Lock(l.Run)}, l.Value, max(ttl.Milliseconds(), 1))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("refresh %d run locks: %w", len(locks), err)
	}
	for i, c := range cmds {
		if v, err := c.Int64(); err == nil && v != 1 {
			lost = append(lost, locks[i])
		}
	}
	return lost, nil
}

// ReleaseLocks deletes the locks that still hold their value, in one
// pipelined round trip; locks that moved on are left alone.
func (k Keys) ReleaseLocks(ctx context.Context, rdb redis.Cmdable, locks []HeldLock) error {
	if len(locks) == 0 {
		return nil
	}
	pipe := rdb.Pipeline()
	for _, l := range locks {
		releaseScript.Eval(ctx, pipe, []string{k.Lock(l.Run)}, l.Value)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("release %d run locks (first %s): %w", len(locks), locks[0].Run, err)
	}
	return nil
}

// dropHolderScript deletes a lock (run lock or bsm/redislock leader lease:
// token + metadata) when its metadata is exactly ARGV[1].
//
//	KEYS[1] lock   ARGV[1] holder   ARGV[2] the token length of lock values
//	returns 1 deleted, 0 free or held by another
var dropHolderScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
local n = tonumber(ARGV[2])
if cur and #cur == n + #ARGV[1] and string.sub(cur, n + 1) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// DropLockOf deletes the lock at key when holder holds it. A process
// restarted under its stable instance name calls it for a leader lease its
// killed predecessor held, to take the lease at once instead of after its
// TTL (the same trust as LockRequest.TakeOver: no other live process uses
// the name). It reports whether a lock was dropped.
func DropLockOf(ctx context.Context, rdb redis.Scripter, key, holder string) (bool, error) {
	if holder == "" {
		return false, nil
	}
	n, err := dropHolderScript.Run(ctx, rdb, []string{key}, holder, LockTokenLen).Int()
	if err != nil {
		return false, fmt.Errorf("drop %s held by %s: %w", key, holder, err)
	}
	return n == 1, nil
}
