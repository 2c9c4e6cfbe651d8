package statestore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/braidhq/braid/pkg/records"
	"github.com/redis/go-redis/v9"
)

// HistoryCap bounds the run history list.
const HistoryCap = 1000

// RunWrite is one fenced, atomic change to one run: the effects of one batch.
type RunWrite struct {
	Run string
	// Fence is the token obtained with the run's lock; the write is refused
	// if the stored fence moved on (another holder took the lock).
	Fence int64
	// Lock is the value the writer's lock holds: the write is refused as
	// stale, too, unless the run's lock still holds it. The fence alone
	// could be handed out twice when a Redis failover loses the newest
	// writes of its master (replication is asynchronous): the lost holder's
	// fence INCR is issued again to the next one. Its lock SET, lost in
	// the same step, makes the two holders' writes tell apart.
	Lock string
	// Create refuses the write if the run's node records already exist (first
	// start only). A run record the api pre-wrote as pending does not count.
	Create bool
	// RunFields, Nodes and Outputs are HSET into the run, nodes and outputs hashes.
	RunFields map[string]string
	Nodes     map[string][]byte
	Outputs   map[string][]byte
	// ClearOutputs are output fields to delete (rerun).
	ClearOutputs []string
	// History lines are appended to the capped history list.
	History []string
	// FanOuts are the per-instance writes of fan-out nodes.
	FanOuts []FanOutWrite
	// Ended are attempts this write takes out of flight (terminal, waiting
	// for a retry, cancelled): their worker claims are deleted in the same
	// step. A claim matters only while the record names its attempt as in
	// flight — the claim and heartbeat scripts read the record first and
	// refuse any other — so deleting it here frees its memory at once
	// instead of when its TTL (the heartbeat timeout) runs out.
	Ended []Attempt
	// Orphans are claims of attempts declared lost, held by worker
	// incarnations that are gone: each is deleted in the same step if it
	// still holds that holder, so the attempt's new dispatch can be claimed
	// (a claim some live worker took meanwhile is left alone).
	Orphans []OrphanedClaim
}

// OrphanedClaim is a claim to delete if its value is still Holder.
type OrphanedClaim struct {
	Attempt Attempt
	Holder  string
}

// FanOutWrite is one fan-out node's share of a RunWrite.
type FanOutWrite struct {
	Node string
	// Reset deletes the node's instance records, instance outputs and items
	// before the writes below (a rerun).
	Reset bool
	// Instances and Outputs are HSET by instance index.
	Instances map[int][]byte
	Outputs   map[int][]byte
	// Items are appended to the node's item list (once, at launch).
	Items [][]byte
}

// Write outcomes.
const (
	WriteApplied = 1
	WriteStale   = 0 // fence moved on: the writer no longer holds the run
	WriteExists  = 2 // Create on a run that was already started
)

// applyScript applies a RunWrite atomically.
//
//	KEYS[1] fence  KEYS[2] run  KEYS[3] nodes  KEYS[4] outputs  KEYS[5] history
//	KEYS[6+3k..8+3k] fan-out node k's instances hash, instance outputs hash, items list
//	KEYS[6+3n..] claim keys of ended attempts (n = number of fan-out sections), deleted,
//	  then the m orphaned claim keys, each deleted only if it holds its holder,
//	  then the run's lock key
//	ARGV[1] fence token  ARGV[2] create (0|1)  ARGV[3] history cap
//	ARGV[4..8] counts: run field pairs, node pairs, output pairs, cleared outputs, history lines
//	ARGV[9] number of fan-out sections
//	ARGV[10..] the pairs and lists, in that order, then per fan-out section:
//	  reset (0|1), instance pairs, output pairs, items, followed by those;
//	  then m, followed by the m orphaned claims' holders; last, the lock's value
//	returns 1 applied, 0 stale (the fence moved on, or the lock is not the
//	  writer's), 2 create refused (the run was already started)
//
// Idempotent: every write is an overwrite of the same values, and a replay
// after success is either applied again identically or refused by Create.
var applyScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('GET', KEYS[#KEYS]) ~= ARGV[#ARGV] then return 0 end
local lastKey = #KEYS - 1
local function done(code) return code end
` + applyBody)

// applyBody is what applyScript and startScript share: the writes of a
// RunWrite, once the fence is known to be the writer's. It reads KEYS and
// ARGV as applyScript documents them, up to KEYS[lastKey], and answers
// done(outcome): 1 applied, 2 create refused.
const applyBody = `
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then return done(2) end
local pos = 10
-- chunked calls cmd (after key, when there is one) with list[from..to], 500
-- at a time: one call for many fields or keys instead of one each.
local function chunked(cmd, key, list, from, to)
  while from <= to do
    local last = math.min(from + 499, to)
    if key then
      redis.call(cmd, key, unpack(list, from, last))
    else
      redis.call(cmd, unpack(list, from, last))
    end
    from = last + 1
  end
end
local function hset(key, pairs)
  local i = 0
  while i < pairs do
    local n = math.min(pairs - i, 500)
    local args = {}
    for j = 0, n - 1 do
      args[#args + 1] = ARGV[pos + 2 * (i + j)]
      args[#args + 1] = ARGV[pos + 2 * (i + j) + 1]
    end
    redis.call('HSET', key, unpack(args))
    i = i + n
  end
  pos = pos + 2 * pairs
end
hset(KEYS[2], tonumber(ARGV[4]))
hset(KEYS[3], tonumber(ARGV[5]))
hset(KEYS[4], tonumber(ARGV[6]))
local cleared = tonumber(ARGV[7])
chunked('HDEL', KEYS[4], ARGV, pos, pos + cleared - 1)
pos = pos + cleared
local h = tonumber(ARGV[8])
chunked('RPUSH', KEYS[5], ARGV, pos, pos + h - 1)
pos = pos + h
if h > 0 then redis.call('LTRIM', KEYS[5], -tonumber(ARGV[3]), -1) end
for k = 0, tonumber(ARGV[9]) - 1 do
  local ik, ok, lk = KEYS[6 + 3 * k], KEYS[7 + 3 * k], KEYS[8 + 3 * k]
  local reset, ni, no, nl = ARGV[pos], tonumber(ARGV[pos + 1]), tonumber(ARGV[pos + 2]), tonumber(ARGV[pos + 3])
  pos = pos + 4
  if reset == '1' then redis.call('DEL', ik, ok, lk) end
  hset(ik, ni)
  hset(ok, no)
  chunked('RPUSH', lk, ARGV, pos, pos + nl - 1)
  pos = pos + nl
end
local orphans = tonumber(ARGV[pos])
local firstOrphan = lastKey - orphans + 1
chunked('DEL', nil, KEYS, 6 + 3 * tonumber(ARGV[9]), firstOrphan - 1)
for j = 0, orphans - 1 do
  if redis.call('GET', KEYS[firstOrphan + j]) == ARGV[pos + 1 + j] then redis.call('DEL', KEYS[firstOrphan + j]) end
end
return done(1)
`

// QueueWrite adds w to pipe; the returned command yields a Write outcome
// once the pipeline has run.
func (k Keys) QueueWrite(ctx context.Context, pipe redis.Pipeliner, w RunWrite) *redis.Cmd {
	keys, args := k.writeArgs(w, 1)
	keys, args = append(keys, k.Lock(w.Run)), append(args, w.Lock)
	return applyScript.EvalSha(ctx, pipe, keys, args...)
}

// writeArgs lays w out as applyScript's KEYS and ARGV, with room for extra
// more of each after them.
func (k Keys) writeArgs(w RunWrite, extra int) (keys []string, args []any) {
	keys = make([]string, 0, 5+3*len(w.FanOuts)+len(w.Ended)+len(w.Orphans)+extra)
	keys = append(keys, k.Fence(w.Run), k.Run(w.Run), k.Nodes(w.Run), k.Outputs(w.Run), k.History(w.Run))
	args = make([]any, 0, 10+2*(len(w.RunFields)+len(w.Nodes)+len(w.Outputs))+len(w.ClearOutputs)+len(w.History)+len(w.Orphans)+extra)
	args = append(args, strconv.FormatInt(w.Fence, 10), boolArg(w.Create), HistoryCap,
		len(w.RunFields), len(w.Nodes), len(w.Outputs), len(w.ClearOutputs), len(w.History), len(w.FanOuts))
	for f, v := range w.RunFields {
		args = append(args, f, v)
	}
	for f, v := range w.Nodes {
		args = append(args, f, v)
	}
	for f, v := range w.Outputs {
		args = append(args, f, v)
	}
	for _, f := range w.ClearOutputs {
		args = append(args, f)
	}
	for _, h := range w.History {
		args = append(args, h)
	}
	for _, f := range w.FanOuts {
		keys = append(keys, k.Instances(w.Run, f.Node), k.InstanceOutputs(w.Run, f.Node), k.Items(w.Run, f.Node))
		args = f.appendArgs(args)
	}
	for _, a := range w.Ended {
		keys = append(keys, k.Claim(a.Run, a.Node, a.Instance, a.Attempt))
	}
	args = append(args, len(w.Orphans))
	for _, o := range w.Orphans {
		a := o.Attempt
		keys = append(keys, k.Claim(a.Run, a.Node, a.Instance, a.Attempt))
		args = append(args, o.Holder)
	}
	return keys, args
}

// LoadScripts makes sure the server knows every script, so that EvalSha in
// pipelines never meets NOSCRIPT (call at start-up and after a Redis restart).
func LoadScripts(ctx context.Context, rdb redis.Scripter) error {
	for _, s := range []*redis.Script{applyScript, startScript, claimScript, claimsScript, heartbeatScript, releaseScript, acquireScript, admitSlotScript, endedScript} {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			return fmt.Errorf("load redis scripts: %w", err)
		}
	}
	return nil
}

// IsNoScript reports whether err is Redis's NOSCRIPT: the server lost its
// script cache (it restarted, or SCRIPT FLUSH ran) and a pipelined EVALSHA
// found nothing; LoadScripts again before retrying.
func IsNoScript(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "NOSCRIPT")
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// StoredRun is a run as read back from Redis. Outputs is nil when they
// were not read (LoadRunView, an ended notice).
type StoredRun struct {
	Fields  map[string]string
	Nodes   map[string]string
	Outputs map[string]string
}

// Exists reports whether the run record was found.
func (s StoredRun) Exists() bool { return len(s.Fields) > 0 }

// Started reports whether the orchestrator has started the run (its node
// records exist); a run the api recorded as pending has not.
func (s StoredRun) Started() bool { return len(s.Nodes) > 0 }

// LoadRun reads a run's hashes in one round trip.
func (k Keys) LoadRun(ctx context.Context, rdb redis.Cmdable, run string) (StoredRun, error) {
	return k.loadRun(ctx, rdb, run, true)
}

// LoadRunView reads a run's hash and its node records in one round trip:
// what a view of the run needs, which shows no outputs. Its Outputs is nil:
// a run's outputs can be large, and LoadRun reads them too.
func (k Keys) LoadRunView(ctx context.Context, rdb redis.Cmdable, run string) (StoredRun, error) {
	return k.loadRun(ctx, rdb, run, false)
}

func (k Keys) loadRun(ctx context.Context, rdb redis.Cmdable, run string, outputs bool) (StoredRun, error) {
	pipe := rdb.Pipeline()
	f := pipe.HGetAll(ctx, k.Run(run))
	n := pipe.HGetAll(ctx, k.Nodes(run))
	var o *redis.MapStringStringCmd
	if outputs {
		o = pipe.HGetAll(ctx, k.Outputs(run))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return StoredRun{}, fmt.Errorf("load run %s: %w", run, err)
	}
	st := StoredRun{Fields: f.Val(), Nodes: n.Val()}
	if o != nil {
		st.Outputs = o.Val()
	}
	return st, nil
}

// appendArgs appends f's section of the apply script's arguments.
func (f FanOutWrite) appendArgs(args []any) []any {
	args = append(args, boolArg(f.Reset), len(f.Instances), len(f.Outputs), len(f.Items))
	for idx, rec := range f.Instances {
		args = append(args, InstanceField(idx), rec)
	}
	for idx, out := range f.Outputs {
		args = append(args, InstanceField(idx), out)
	}
	for _, it := range f.Items {
		args = append(args, it)
	}
	return args
}

// RunStatuses reads the status field alone of each of runs (one HGET each,
// in one pipeline: one round trip on one server, one per node on a Redis
// Cluster): what the api's waiting requests re-check once a second before
// they read a run whole. A run that does not exist reads "".
func (k Keys) RunStatuses(ctx context.Context, rdb redis.Cmdable, runs []string) ([]string, error) {
	pipe := rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(runs))
	for i, run := range runs {
		cmds[i] = pipe.HGet(ctx, k.Run(run), records.FieldStatus)
	}
	_, _ = pipe.Exec(ctx) // each command's error is read below; redis.Nil is "no such run"
	out := make([]string, len(runs))
	for i, c := range cmds {
		switch err := c.Err(); {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return nil, fmt.Errorf("read the status of %d runs (run %s): %w", len(runs), runs[i], err)
		default:
			out[i] = c.Val()
		}
	}
	return out, nil
}
