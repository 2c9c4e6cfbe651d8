package metrics

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"net"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/metrics/catalog"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// maxCommands bounds the command label's values; past it a command is
// counted as "other" (Braid's code issues a few dozen).
const maxCommands = 100

// maxPipelineScripts bounds the distinct scripts one pipeline is timed for.
const maxPipelineScripts = 8

// InstrumentRedis adds a hook to rdb that times every round trip by
// command name (braid_redis_command_duration_seconds; a pipeline counts
// once, as "pipeline") and every call running one of the store's Lua
// scripts by the script's name (braid_redis_script_duration_seconds:
// "apply", "claim", ..., "other" for scripts that are not the store's,
// such as redislock's). Keys and arguments never become labels.
//
// go-redis cannot remove a hook: give each service its own client (as the
// service binaries and `braid dev` do), or the commands of a client
// instrumented twice are counted twice.
func InstrumentRedis(rdb redis.UniversalClient, r prometheus.Registerer) error {
	cmds, err := NewHistogramVec(r, catalog.RedisCommandDuration, RedisBuckets)
	if err != nil {
		return err
	}
	scripts, err := NewHistogramVec(r, catalog.RedisScriptDuration, RedisBuckets)
	if err != nil {
		return err
	}
	rdb.AddHook(newRedisHook(cmds, scripts))
	return nil
}

// redisHook is the go-redis hook of InstrumentRedis. Safe for concurrent use.
type redisHook struct {
	commands *prometheus.HistogramVec
	pipeline prometheus.Observer
	// byCommand caches the command label's children (at most maxCommands).
	mu        sync.RWMutex
	byCommand map[string]prometheus.Observer
	// bySHA maps a script's hash to its child; other to scripts not ours.
	bySHA map[string]prometheus.Observer
	other prometheus.Observer
}

func newRedisHook(commands, scripts *prometheus.HistogramVec) *redisHook {
	h := &redisHook{
		commands: commands, pipeline: commands.WithLabelValues("pipeline"),
		byCommand: map[string]prometheus.Observer{}, bySHA: map[string]prometheus.Observer{},
		other: scripts.WithLabelValues("other"),
	}
	for sha, name := range statestore.ScriptNames() {
		h.bySHA[sha] = scripts.WithLabelValues(name)
	}
	return h
}

// DialHook passes dials through.
func (h *redisHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

// ProcessHook times one command.
func (h *redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		d := time.Since(start).Seconds()
		h.command(cmd.Name()).Observe(d)
		if s := h.script(cmd); s != nil {
			s.Observe(d)
		}
		return err
	}
}

// ProcessPipelineHook times one pipeline (or transaction) as a whole, and
// counts its round trip once for each distinct script in it.
func (h *redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		d := time.Since(start).Seconds()
		h.pipeline.Observe(d)
		var seen [maxPipelineScripts]prometheus.Observer
		n := 0
	cmds:
		for _, c := range cmds {
			s := h.script(c)
			if s == nil {
				continue
			}
			for _, o := range seen[:n] {
				if o == s {
					continue cmds
				}
			}
			if n == len(seen) {
				break
			}
			seen[n], n = s, n+1
			s.Observe(d)
		}
		return err
	}
}

// command returns the child of the command label for name.
func (h *redisHook) command(name string) prometheus.Observer {
	h.mu.RLock()
	o, ok := h.byCommand[name]
	h.mu.RUnlock()
	if ok {
		return o
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if o, ok := h.byCommand[name]; ok {
		return o
	}
	if len(h.byCommand) >= maxCommands {
		return h.commands.WithLabelValues("other")
	}
	o = h.commands.WithLabelValues(name)
	h.byCommand[name] = o
	return o
}

// script returns the script child of a command running a Lua script, or
// nil for other commands.
func (h *redisHook) script(cmd redis.Cmder) prometheus.Observer {
	args := cmd.Args()
	if len(args) < 2 {
		return nil
	}
	var sha string
	switch cmd.Name() {
	case "evalsha", "evalsha_ro":
		sha, _ = args[1].(string)
	case "eval", "eval_ro": // go-redis falls back to EVAL after NOSCRIPT: rare
		src, _ := args[1].(string)
		sum := sha1.Sum([]byte(src))
		sha = hex.EncodeToString(sum[:])
	default:
		return nil
	}
	if o, ok := h.bySHA[sha]; ok {
		return o
	}
	return h.other
}
