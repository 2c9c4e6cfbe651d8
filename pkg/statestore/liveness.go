package statestore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/braidhq/braid/pkg/records"
	"github.com/redis/go-redis/v9"
)

// ClaimState says who, if anyone, holds an attempt's claim.
type ClaimState int

// Claim states, as the reconciler sees them.
const (
	// ClaimNone: no claim is stored (never claimed, or it lapsed).
	ClaimNone ClaimState = iota
	// ClaimLive: a worker incarnation that is alive holds the claim.
	ClaimLive
	// ClaimOrphaned: the claim is stored but its holder's incarnation is
	// gone (the worker restarted under the same id, or its liveness key
	// expired): nobody will ever report the attempt.
	ClaimOrphaned
)

// ClaimFact is one attempt's claim as the reconciler sees it.
type ClaimFact struct {
	State  ClaimState
	Holder records.Holder
	// Raw is the claim's stored value (what an orphan's delete compares).
	Raw string
}

// ClaimFacts looks up the claims of atts and whether their holders are
// alive: one pipelined round trip for the claims, one for the liveness of
// the distinct workers holding them. The i-th fact is atts[i]'s. A claim
// whose value names no incarnation is taken as live while it exists.
func (k Keys) ClaimFacts(ctx context.Context, rdb redis.Cmdable, atts []Attempt) ([]ClaimFact, error) {
	if len(atts) == 0 {
		return nil, nil
	}
	pipe := rdb.Pipeline()
	reads := k.QueueClaimReads(ctx, pipe, atts)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, fmt.Errorf("read %d claims (first %s): %w", len(atts), atts[0], err)
	}
	if err := k.ResolveClaims(ctx, rdb, reads); err != nil {
		return nil, err
	}
	return reads.Facts, nil
}

// ClaimReads are claim reads queued on a pipeline (QueueClaimReads); once
// it ran, ResolveClaims fills Facts, the i-th fact being Attempts[i]'s.
type ClaimReads struct {
	Attempts []Attempt
	Facts    []ClaimFact
	cmds     []*redis.StringCmd
}

// QueueClaimReads queues on pipe the reads of atts' claims, so that a
// caller gathering other facts reads them in the same round trip.
func (k Keys) QueueClaimReads(ctx context.Context, pipe redis.Pipeliner, atts []Attempt) *ClaimReads {
	r := &ClaimReads{Attempts: atts, cmds: make([]*redis.StringCmd, len(atts))}
	for i, a := range atts {
		r.cmds[i] = pipe.Get(ctx, k.Claim(a.Run, a.Node, a.Instance, a.Attempt))
	}
	return r
}

// ResolveClaims turns the claim reads of one executed pipeline into facts:
// one more round trip reads the liveness of every distinct holder of them
// all. A read that failed other than by the claim's absence is an error.
func (k Keys) ResolveClaims(ctx context.Context, rdb redis.Cmdable, reads ...*ClaimReads) error {
	var workers []string
	for _, r := range reads {
		r.Facts = make([]ClaimFact, len(r.cmds))
		for i, c := range r.cmds {
			switch err := c.Err(); {
			case err == nil:
				r.Facts[i] = ClaimFact{State: ClaimLive, Raw: c.Val(), Holder: records.ParseHolder(c.Val())}
				workers = append(workers, r.Facts[i].Holder.Worker)
			case err != redis.Nil:
				return fmt.Errorf("read claim %s: %w", r.Attempts[i], err)
			}
		}
	}
	live, err := k.LiveIncarnations(ctx, rdb, workers)
	if err != nil {
		return err
	}
	for _, r := range reads {
		for i := range r.Facts {
			h := r.Facts[i].Holder
			if r.Facts[i].State == ClaimLive && h.Incarnation != "" && live[h.Worker] != h.Incarnation {
				r.Facts[i].State = ClaimOrphaned
			}
		}
	}
	return nil
}

// LiveIncarnations returns, for each distinct id of ids, the incarnation
// alive under it (ids with none are absent), in one pipelined round trip.
func (k Keys) LiveIncarnations(ctx context.Context, rdb redis.Cmdable, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	pipe := rdb.Pipeline()
	cmds := map[string]*redis.StringCmd{}
	for _, id := range ids {
		if _, ok := cmds[id]; !ok {
			cmds[id] = pipe.Get(ctx, k.WorkerLive(id))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, fmt.Errorf("read liveness of %d workers: %w", len(cmds), err)
	}
	for id, c := range cmds {
		if c.Err() == nil {
			out[id] = c.Val()
		}
	}
	return out, nil
}

// RenewLiveness declares incarnation alive under worker id for ttl and
// returns the incarnation that was alive under that id before ("" if
// none): a different one is a killed predecessor (or, if it keeps coming
// back, a second live process wrongly given the same id).
func (k Keys) RenewLiveness(ctx context.Context, rdb redis.Cmdable, id, incarnation string, ttl time.Duration) (string, error) {
	prev, err := rdb.SetArgs(ctx, k.WorkerLive(id), incarnation, redis.SetArgs{TTL: ttl, Get: true}).Result()
	if err != nil && err != redis.Nil {
		return "", fmt.Errorf("renew liveness of worker %s: %w", id, err)
	}
	return prev, nil
}

// RegisteredWorkers reads the worker registry (Keys.Workers): each entry by
// worker id. An entry that does not decode is left out (a worker rewrites
// its own every heartbeat).
func (k Keys) RegisteredWorkers(ctx context.Context, rdb redis.Cmdable) (map[string]records.WorkerStatus, error) {
	raw, err := rdb.HGetAll(ctx, k.Workers()).Result()
	if err != nil {
		return nil, fmt.Errorf("read the worker registry: %w", err)
	}
	out := make(map[string]records.WorkerStatus, len(raw))
	for id, v := range raw {
		var st records.WorkerStatus
		if json.Unmarshal([]byte(v), &st) == nil {
			out[id] = st
		}
	}
	return out, nil
}
