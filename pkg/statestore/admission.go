package statestore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Workflow-level concurrency: a workflow with `concurrency: N` has at most N
// admitted, unfinished runs. Runs wait in AdmitQueue in request order and
// are admitted from its head only, so they start in the order they were
// asked for, whatever order their start events reach the orchestrators in.
// Both scripts are idempotent (go-redis may send a command twice).

// admitSlotScript admits run if it is already admitted, or if a slot is free and
// run heads the queue (adding it to the queue first, at score, if missing).
//
//	KEYS[1] AdmitQueue  KEYS[2] AdmitActive
//	ARGV[1] run  ARGV[2] cap  ARGV[3] request time (ms)
//	returns 1 admitted, 0 waiting
var admitSlotScript = redis.NewScript(`
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 1 end
redis.call('ZADD', KEYS[1], 'NX', ARGV[3], ARGV[1])
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end
local head = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if head ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
`)

// releaseSlotScript frees run's slot (or its queue place) and returns the runs
// at the head of the queue that the free slots now admit, for the caller to
// nudge.
//
//	KEYS[1] AdmitQueue  KEYS[2] AdmitActive
//	ARGV[1] run  ARGV[2] cap
//	returns the run ids to nudge (possibly none)
var releaseSlotScript = redis.NewScript(`
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
local free = tonumber(ARGV[2]) - redis.call('SCARD', KEYS[2])
if free <= 0 then return {} end
return redis.call('ZRANGE', KEYS[1], 0, free - 1)
`)

// Admit reports whether run of workflow may start under cap.
func (k Keys) Admit(ctx context.Context, rdb redis.Scripter, workflow, run string, cap int, score int64) (bool, error) {
	n, err := admitSlotScript.Run(ctx, rdb, []string{k.AdmitQueue(workflow), k.AdmitActive(workflow)},
		run, strconv.Itoa(cap), strconv.FormatInt(score, 10)).Int()
	if err != nil {
		return false, fmt.Errorf("admit run %s workflow=%s: %w", run, workflow, err)
	}
	return n == 1, nil
}

// QueueAdmit queues Admit on pipe (EVALSHA: LoadScripts first); read the
// outcome with Admitted after the pipeline ran.
func (k Keys) QueueAdmit(ctx context.Context, pipe redis.Pipeliner, workflow, run string, cap int, score int64) *redis.Cmd {
	return admitSlotScript.EvalSha(ctx, pipe, []string{k.AdmitQueue(workflow), k.AdmitActive(workflow)},
		run, strconv.Itoa(cap), strconv.FormatInt(score, 10))
}

// AdmitOutcome reads a QueueAdmit command: whether the run may start.
func AdmitOutcome(c *redis.Cmd) (bool, error) {
	n, err := c.Int()
	if err != nil {
		return false, fmt.Errorf("admit: %w", err)
	}
	return n == 1, nil
}

// headsScript returns the queued runs the free slots admit now.
//
//	KEYS[1] AdmitQueue  KEYS[2] AdmitActive  ARGV[1] cap
var headsScript = redis.NewScript(`
local free = tonumber(ARGV[1]) - redis.call('SCARD', KEYS[2])
if free <= 0 then return {} end
return redis.call('ZRANGE', KEYS[1], 0, free - 1)
`)

// Admissible returns the queued runs of workflow that free slots admit now
// (read-only), for the caller to nudge.
func (k Keys) Admissible(ctx context.Context, rdb redis.Scripter, workflow string, cap int) ([]string, error) {
	next, err := headsScript.Run(ctx, rdb, []string{k.AdmitQueue(workflow), k.AdmitActive(workflow)}, strconv.Itoa(cap)).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("admissible runs workflow=%s: %w", workflow, err)
	}
	return next, nil
}

// Release frees run's place and returns the queued runs that may start now.
func (k Keys) Release(ctx context.Context, rdb redis.Scripter, workflow, run string, cap int) ([]string, error) {
	next, err := releaseSlotScript.Run(ctx, rdb, []string{k.AdmitQueue(workflow), k.AdmitActive(workflow)},
		run, strconv.Itoa(cap)).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("release run %s workflow=%s: %w", run, workflow, err)
	}
	return next, nil
}

// Admitted lists workflow's admitted runs (for the orchestrator to release
// runs that finished without releasing, e.g. after a crash).
func (k Keys) Admitted(ctx context.Context, rdb redis.Cmdable, workflow string) ([]string, error) {
	ids, err := rdb.SMembers(ctx, k.AdmitActive(workflow)).Result()
	if err != nil {
		return nil, fmt.Errorf("admitted runs workflow=%s: %w", workflow, err)
	}
	return ids, nil
}
