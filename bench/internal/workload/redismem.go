package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// scanCount is the COUNT hint of each SCAN step; scanSteps bounds the steps.
const (
	scanCount = 1000
	scanSteps = 1_000_000
)

// redisBytesMethod says how redis_bytes_per_node and _all are counted.
const redisBytesMethod = "redis_bytes_per_node: engine state without outputs — MEMORY USAGE key SAMPLES 0 summed over every key of the run's {run id} hash tag " +
	"except its outputs hash (…:out), / nodes; redis_bytes_per_node_all: everything the finished run costs — every key of its hash tag, outputs included, " +
	"plus its entries in the cross-run sorted sets it is in (runs:all, the workflow's runs index, runs:active, timers; a run found in none costs 0 there), " +
	"each entry estimated as that sorted set's MEMORY USAGE / ZCARD (its mean bytes per entry), / nodes"

// runBytes is one finished run's Redis memory (MEMORY USAGE SAMPLES 0, exact).
type runBytes struct {
	// keys is every key of the run's hash tag; outputs the outputs hash.
	keys, outputs int64
	// index is the run's estimated share of the cross-run indexes.
	index float64
}

// perNode returns the engine state without outputs and everything the run
// costs, each divided by nodes.
func (b runBytes) perNode(nodes int) (engine, all float64) {
	n := float64(nodes)
	return float64(b.keys-b.outputs) / n, (float64(b.keys) + b.index) / n
}

// runBytesPerNode returns runBytes.perNode of finished run run of workflow
// wf. It SCANs every master (on a cluster the run's keys share its hash
// tag, so one master holds them all) and only reads.
func (s *session) runBytesPerNode(ctx context.Context, run, wf string, nodes int) (engine, all float64, err error) {
	var mu sync.Mutex
	var b runBytes
	err = forEachMaster(ctx, s.rdb, func(ctx context.Context, node *redis.Client) error {
		k, o, err := s.runBytesOn(ctx, node, run)
		mu.Lock()
		b.keys, b.outputs = b.keys+k, b.outputs+o
		mu.Unlock()
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	if b.index, err = s.indexShare(ctx, run, wf); err != nil {
		return 0, 0, err
	}
	engine, all = b.perNode(nodes)
	return engine, all, nil
}

// runBytesOn sums MEMORY USAGE of run's keys on one node and, apart, of
// its outputs hash.
func (s *session) runBytesOn(ctx context.Context, node *redis.Client, run string) (total, outputs int64, err error) {
	var cursor uint64
	for range scanSteps {
		keys, next, err := node.Scan(ctx, cursor, s.keys.RunPattern(run), scanCount).Result()
		if err != nil {
			return 0, 0, fmt.Errorf("scan keys of run %s on %s: %w", run, node.Options().Addr, err)
		}
		for _, k := range keys {
			n, err := node.MemoryUsage(ctx, k, 0).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				return 0, 0, fmt.Errorf("memory usage %s: %w", k, err)
			}
			total += n
			if k == s.keys.Outputs(run) {
				outputs += n
			}
		}
		if cursor = next; cursor == 0 {
			return total, outputs, nil
		}
	}
	return 0, 0, fmt.Errorf("scan keys of run %s on %s: more than %d steps", run, node.Options().Addr, scanSteps)
}

// indexShare estimates the bytes run's entries take in the cross-run
// sorted sets: for each one holding it (runs:all, wf's runs index,
// runs:active by run id; timers by members starting with the run id), the
// set's MEMORY USAGE / ZCARD per entry. The shard count comes from the
// namespace's layout hash, as the services wrote it.
func (s *session) indexShare(ctx context.Context, run, wf string) (float64, error) {
	keys := s.keys
	if v, err := s.rdb.HGet(ctx, keys.Layout(), "index_shards").Result(); err == nil {
		keys.Shards, _ = strconv.Atoi(v)
	}
	var total float64
	for _, z := range []string{keys.AllRunsOf(run), keys.WorkflowRunsOf(wf, run), keys.ActiveRunsOf(run)} {
		err := s.rdb.ZScore(ctx, z, run).Err()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("zscore %s: %w", z, err)
		}
		per, err := s.perEntry(ctx, z)
		if err != nil {
			return 0, err
		}
		total += per
	}
	n, err := s.runTimers(ctx, keys.TimersOf(run), run)
	if err != nil {
		return 0, err
	}
	if n > 0 {
		per, err := s.perEntry(ctx, keys.TimersOf(run))
		if err != nil {
			return 0, err
		}
		total += per * float64(n)
	}
	return total, nil
}

// runTimers counts run's members of the timers set z (ZSCAN MATCH).
func (s *session) runTimers(ctx context.Context, z, run string) (int, error) {
	n := 0
	var cursor uint64
	for range scanSteps {
		pairs, next, err := s.rdb.ZScan(ctx, z, cursor, run+"*", scanCount).Result()
		if err != nil {
			return 0, fmt.Errorf("zscan %s: %w", z, err)
		}
		n += countRunTimers(pairs, run)
		if cursor = next; cursor == 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("zscan %s: more than %d steps", z, scanSteps)
}

// countRunTimers counts the members of a ZSCAN answer (member, score, …)
// that belong to run (Timer.Member starts with the run id and a separator).
func countRunTimers(pairs []string, run string) int {
	n := 0
	for i := 0; i < len(pairs); i += 2 {
		if rest, ok := strings.CutPrefix(pairs[i], run); ok && rest != "" {
			n++
		}
	}
	return n
}

// perEntry is a sorted set's MEMORY USAGE (SAMPLES 0) / ZCARD.
func (s *session) perEntry(ctx context.Context, z string) (float64, error) {
	mem, err := s.rdb.MemoryUsage(ctx, z, 0).Result()
	if err != nil {
		return 0, fmt.Errorf("memory usage %s: %w", z, err)
	}
	n, err := s.rdb.ZCard(ctx, z).Result()
	if err != nil || n == 0 {
		return 0, fmt.Errorf("zcard %s: %d, %v", z, n, err)
	}
	return float64(mem) / float64(n), nil
}
