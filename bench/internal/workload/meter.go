package workload

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// usage is what a session's processes and infrastructure used in one
// window (see meter).
type usage struct {
	// window is the window's length.
	window time.Duration
	// cpu is the CPU time of each process group of cpuShares.
	cpu map[string]time.Duration
	// redis is the change of the masters' INFO counters.
	redis redisStats
	// kafkaRecords and kafkaBytes are what was produced to the session's
	// topics (kafkaCounter).
	kafkaRecords, kafkaBytes int64
}

// redisStats are INFO stats counters summed over the masters.
type redisStats struct {
	// commands is total_commands_processed.
	commands int64
	// clientBytes is client traffic: total_net_input_bytes +
	// total_net_output_bytes less their replication parts (Redis 7
	// counts replication in both totals).
	clientBytes int64
	// replBytes is total_net_repl_output_bytes: what masters sent their
	// replicas.
	replBytes int64
}

func (a redisStats) minus(b redisStats) redisStats {
	return redisStats{commands: a.commands - b.commands, clientBytes: a.clientBytes - b.clientBytes, replBytes: a.replBytes - b.replBytes}
}

// lessIdle returns u without the background that idle measured: every
// counter less idle's rate of it over u's window. A group idle did not
// time is dropped.
func (u usage) lessIdle(idle usage) usage {
	f := u.window.Seconds() / idle.window.Seconds()
	scale := func(x int64) int64 { return int64(math.Round(float64(x) * f)) }
	out := usage{window: u.window, cpu: map[string]time.Duration{},
		redis: redisStats{commands: u.redis.commands - scale(idle.redis.commands),
			clientBytes: u.redis.clientBytes - scale(idle.redis.clientBytes), replBytes: u.redis.replBytes - scale(idle.redis.replBytes)},
		kafkaRecords: u.kafkaRecords - scale(idle.kafkaRecords), kafkaBytes: u.kafkaBytes - scale(idle.kafkaBytes)}
	for g, d := range u.cpu {
		if bg, ok := idle.cpu[g]; ok {
			out.cpu[g] = d - time.Duration(scale(int64(bg)))
		}
	}
	return out
}

// meter measures one window of a session: process CPU from /proc, the
// Redis masters' counters from INFO stats (the meter's own INFO calls, one
// per master at each end, are counted too), and Kafka high watermarks,
// whose records it reads back once the window is closed.
type meter struct {
	s      *session
	kafka  *kafkaCounter
	t0     time.Time
	shares *cpuShares
	redis  redisStats
	marks  map[partitionKey]int64
}

// startMeter opens a window now.
func (s *session) startMeter(ctx context.Context, kc *kafkaCounter) (*meter, error) {
	marks, err := kc.watermarks(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := readRedisStats(ctx, s.rdb)
	if err != nil {
		return nil, err
	}
	return &meter{s: s, kafka: kc, t0: time.Now(), shares: s.startCPUShares(), redis: rs, marks: marks}, nil
}

// stop closes the window and returns its usage; reading the records back
// comes after the window, so its work is not counted.
func (m *meter) stop(ctx context.Context) (usage, error) {
	u := usage{window: time.Since(m.t0), cpu: m.shares.used()}
	rs, err := readRedisStats(ctx, m.s.rdb)
	if err != nil {
		return u, err
	}
	marks, err := m.kafka.watermarks(ctx)
	if err != nil {
		return u, err
	}
	u.redis = rs.minus(m.redis)
	u.kafkaRecords, u.kafkaBytes, err = m.kafka.between(ctx, m.marks, marks)
	return u, err
}

// readRedisStats sums the counters of INFO stats over every master.
func readRedisStats(ctx context.Context, rdb redis.UniversalClient) (redisStats, error) {
	var mu sync.Mutex
	var sum redisStats
	err := forEachMaster(ctx, rdb, func(ctx context.Context, node *redis.Client) error {
		info, err := node.Info(ctx, "stats").Result()
		if err != nil {
			return fmt.Errorf("info stats of %s: %w", node.Options().Addr, err)
		}
		f, err := infoInts(info, "total_commands_processed", "total_net_input_bytes", "total_net_output_bytes",
			"total_net_repl_input_bytes", "total_net_repl_output_bytes")
		if err != nil {
			return fmt.Errorf("info stats of %s: %w", node.Options().Addr, err)
		}
		mu.Lock()
		defer mu.Unlock()
		sum.commands += f[0]
		sum.clientBytes += f[1] + f[2] - f[3] - f[4]
		sum.replBytes += f[4]
		return nil
	})
	return sum, err
}

// infoInts returns the integer values of names in INFO text, in order.
func infoInts(info string, names ...string) ([]int64, error) {
	vals := map[string]string{}
	for line := range strings.Lines(info) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			vals[k] = v
		}
	}
	out := make([]int64, len(names))
	for i, name := range names {
		n, err := strconv.ParseInt(vals[name], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("field %s: %q is not an integer", name, vals[name])
		}
		out[i] = n
	}
	return out, nil
}
