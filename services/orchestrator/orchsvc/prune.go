package orchsvc

import (
	"context"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
)

// Retention: the maintenance leader deletes the runs that ended more than
// Config.RunRetention ago (statestore.PruneRun: every key of the run and
// its index entries). Redis holds every run in memory, so without it a
// busy stack's memory only grows.
const (
	// pruneEvery is how often a round over the all-runs index begins when
	// the last one found nothing more to delete (half the retention when
	// that is shorter, at least a second).
	pruneEvery = time.Minute
	// prunePage bounds the runs one step reads from the index.
	prunePage = 100
	// pruneBudget bounds the time one step spends deleting (at least one
	// run), so that timers keep firing on time behind a backlog: the step
	// runs in the maintenance loop, every TimerPoll while runs are due.
	pruneBudget = 25 * time.Millisecond
)

// pruner walks the all-runs index shards, oldest run first, up to the runs
// created before the cutoff (a run cannot end before it began). The runs it
// keeps (not ended, ended since the cutoff, or busy) stay at the front of
// their shard; skip walks past them. Not safe for concurrent use: the
// maintain loop owns it.
type pruner struct {
	shards []string
	shard  int // the shard being walked; len(shards) between rounds
	skip   int // runs kept at the front of the shard in this round
	next   time.Time
	pruned int // in this round
}

func newPruner(shards []string) *pruner { return &pruner{shards: shards, shard: len(shards)} }

// reset abandons the round in progress (the lease moved); the next leader
// begins its own.
func (p *pruner) reset() { p.shard, p.next = len(p.shards), time.Time{} }

// pruneStep deletes the runs due for deletion that one step's budget
// allows. Errors leave the round where it was.
func (s *Service) pruneStep(ctx context.Context, p *pruner, now time.Time) error {
	if s.cfg.RunRetention < 0 {
		return nil
	}
	if p.shard >= len(p.shards) {
		if now.Before(p.next) {
			return nil
		}
		p.shard, p.skip, p.pruned = 0, 0, 0
	}
	cutoff := now.Add(-s.cfg.RunRetention).UnixMilli()
	deadline := time.Now().Add(pruneBudget)
	for p.shard < len(p.shards) {
		ids, err := s.keys.PruneCandidates(ctx, s.rdb, p.shards[p.shard], cutoff, p.skip, prunePage)
		if err != nil {
			return err
		}
		for _, id := range ids {
			out, err := s.keys.PruneRun(ctx, s.rdb, id, cutoff)
			if err != nil {
				// Walk past it for this round: a run that cannot be pruned
				// (a key of the wrong type) must not stop the others.
				p.skip++
				return err
			}
			switch out {
			case statestore.PruneKept:
				p.skip++
			case statestore.Pruned:
				p.pruned++
				s.RunsPruned.Add(1)
			}
			if time.Now().After(deadline) {
				return nil
			}
		}
		if len(ids) < prunePage {
			p.shard, p.skip = p.shard+1, 0
		}
	}
	p.next = now.Add(min(pruneEvery, max(s.cfg.RunRetention/2, time.Second)))
	if p.pruned > 0 {
		s.log.Info("deleted runs past their retention", logkey.Runs, p.pruned, logkey.Window, s.cfg.RunRetention)
	}
	return nil
}
