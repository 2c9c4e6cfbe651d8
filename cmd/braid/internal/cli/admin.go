package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/braidhq/braid/pkg/envconf"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// adminRedisTimeout bounds the admin commands' connection to Redis.
const adminRedisTimeout = 10 * time.Second

func newAdminCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Operate on a deployment's Redis directly (services stopped)",
		Long: `Commands that work on a deployment's Redis directly, not through the API.
They read the services' own settings: BRAID_REDIS_URL, BRAID_REDIS_NAMESPACE,
BRAID_REDIS_TLS_CA_FILE and BRAID_REDIS_INDEX_SHARDS.`,
		Args: noArgs,
	}
	cmd.AddCommand(newReindexCmd(a))
	return cmd
}

func newReindexCmd(a *app) *cobra.Command {
	var shards int
	cmd := &cobra.Command{
		Use:   "reindex [--shards N]",
		Short: "Move the run indexes to another shard count (BRAID_REDIS_INDEX_SHARDS)",
		Long: `reindex moves the cross-run indexes (every run, the active and busy runs, each
workflow's runs, the durable timers) to N index shards, N from --shards or else
BRAID_REDIS_INDEX_SHARDS, and records N, so that the services start with
BRAID_REDIS_INDEX_SHARDS=N. A Redis Cluster that gained masters wants more shards.

Stop every api and orchestrator first (workers may keep running); it refuses while
an orchestrator holds its leases. It is safe to interrupt: run it again with the
same N to finish, and no service starts until it has finished.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			env := envconf.FromMap(redisEnv(a.getenv))
			common := env.Common()
			if err := env.Err(); err != nil {
				return usageErrorf("%v", err)
			}
			to := common.IndexShards
			if c.Flags().Changed("shards") {
				to = shards
			}
			if to < 1 || to > statestore.MaxIndexShards {
				return usageErrorf("--shards %d: the count must be 1 to %d", to, statestore.MaxIndexShards)
			}
			ctx := c.Context()
			redis.SetLogger(quietRedis{}) // its dial retries would print over the answer
			rdb, err := statestore.NewClient(ctx, common.RedisURL, adminRedisTimeout, common.RedisCAs)
			if err != nil {
				return fmt.Errorf("BRAID_REDIS_URL: %w", err)
			}
			defer func() { _ = rdb.Close() }()
			progress := reindexReporter(a.errOut, reindexProgressEvery, time.Now)
			st, err := common.Keys().Reindex(ctx, rdb, to, progress) // interrupted, it finishes when run again
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				return a.writeJSON(st)
			}
			if st.From == st.To && !st.Resumed {
				_, err = fmt.Fprintf(a.out, "The run indexes are in %d shards already: nothing to do.\n", st.To)
			} else {
				_, err = fmt.Fprintf(a.out, "Moved the run indexes from %d to %d shards: %d keys read, %d entries copied%s%s.\nStart the services with BRAID_REDIS_INDEX_SHARDS=%d.\n",
					st.From, st.To, st.Keys, st.Entries, malformedNote(st.Malformed), resumedNote(st.Resumed), st.To)
			}
			return err
		},
	}
	cmd.Flags().IntVar(&shards, "shards", 0, "the new shard count, 1 to 256 (default BRAID_REDIS_INDEX_SHARDS)")
	return cmd
}

// reindexProgressEvery is how often braid admin reindex reports progress.
const reindexProgressEvery = 2 * time.Second

// reindexReporter prints a re-index's progress on w: a line when each
// phase starts and one every every while it lasts (on a large deployment
// a re-index takes minutes: about 100 s for ten million entries).
func reindexReporter(w io.Writer, every time.Duration, now func() time.Time) func(statestore.ReindexProgress) {
	var phase string
	var last time.Time
	return func(p statestore.ReindexProgress) {
		t := now()
		switch {
		case p.Phase != phase:
			phase = p.Phase
		case t.Sub(last) < every || p.KeysDone == p.Keys:
			return
		}
		last = t
		if p.Phase == "copy" {
			_, _ = fmt.Fprintf(w, "Copying the entries of %d index keys: %d done, %d entries copied so far\n", p.Keys, p.KeysDone, p.Entries)
		} else {
			_, _ = fmt.Fprintf(w, "Removing the old index keys: %d of %d done\n", p.KeysDone, p.Keys)
		}
	}
}

func malformedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d malformed timers dropped", n)
}

func resumedNote(resumed bool) string {
	if !resumed {
		return ""
	}
	return " (an interrupted re-index finished)"
}

// quietRedis drops go-redis's own log lines; errors reach the user through
// the commands' answers.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// redisEnv is the services' Redis settings from getenv.
func redisEnv(getenv func(string) string) map[string]string {
	m := map[string]string{}
	for _, k := range []string{"BRAID_REDIS_URL", "BRAID_REDIS_NAMESPACE", "BRAID_REDIS_TLS_CA_FILE", "BRAID_REDIS_INDEX_SHARDS"} {
		if v := getenv(k); v != "" {
			m[k] = v
		}
	}
	return m
}
