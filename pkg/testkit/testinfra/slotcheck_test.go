package testinfra

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// failures records what SlotCheck reports instead of failing the test.
type failures struct {
	testing.TB
	errs []string
}

func (f *failures) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

// answerAll is a hook that answers every command itself (with nothing),
// so that no server is needed.
type answerAll struct{}

func (answerAll) DialHook(next redis.DialHook) redis.DialHook { return next }
func (answerAll) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(context.Context, redis.Cmder) error { return nil }
}
func (answerAll) ProcessPipelineHook(redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(context.Context, []redis.Cmder) error { return nil }
}

func TestSlotCheck(t *testing.T) {
	t.Parallel()
	script := redis.NewScript(`return 1`)
	tests := []struct {
		name    string
		send    func(ctx context.Context, c *redis.Client)
		wantErr string // "" for none
		wantID  string // the script the call counts for
	}{
		{"eval, one key", func(ctx context.Context, c *redis.Client) { script.Eval(ctx, c, []string{"a"}) }, "", script.Hash()},
		{"evalsha, keys sharing a tag", func(ctx context.Context, c *redis.Client) {
			script.EvalSha(ctx, c, []string{"x:{r1}:run", "y:{r1}:nodes", "{r1}"})
		}, "", script.Hash()},
		{"no keys", func(ctx context.Context, c *redis.Client) { script.Run(ctx, c, nil) }, "", script.Hash()},
		{"evalsha across slots", func(ctx context.Context, c *redis.Client) {
			script.EvalSha(ctx, c, []string{"{r1}:run", "{r2}:run"})
		}, `"{r1}:run" is in slot`, script.Hash()},
		{"eval_ro across slots", func(ctx context.Context, c *redis.Client) {
			c.EvalRO(ctx, "return 1", []string{"a", "b"})
		}, "EVAL_RO", script.Hash()},
		{"in a pipeline", func(ctx context.Context, c *redis.Client) {
			pipe := c.Pipeline()
			pipe.Set(ctx, "a", 1, 0)
			script.EvalSha(ctx, pipe, []string{"{a}1", "{a}2"})
			script.EvalSha(ctx, pipe, []string{"{a}1", "b"})
			_, _ = pipe.Exec(ctx)
		}, `"b" in slot`, script.Hash()},
		{"fcall across slots", func(ctx context.Context, c *redis.Client) { c.FCall(ctx, "fn", []string{"a", "b"}) }, "FCALL", "function:fn"},
		{"numkeys past the arguments", func(ctx context.Context, c *redis.Client) {
			c.Do(ctx, "EVALSHA", script.Hash(), 3, "a")
		}, "numkeys 3 does not fit", script.Hash()},
		{"not a script", func(ctx context.Context, c *redis.Client) { c.MGet(ctx, "a", "b") }, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &failures{TB: t}
			check := NewSlotCheck(rec)
			c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
			defer c.Close()
			c.AddHook(check)
			c.AddHook(answerAll{})
			tc.send(context.Background(), c)
			if tc.wantErr == "" {
				require.Empty(t, rec.errs)
			} else {
				require.Len(t, rec.errs, 1)
				require.Contains(t, rec.errs[0], tc.wantErr)
			}
			if tc.wantID == "" {
				require.Zero(t, check.Checked())
				return
			}
			require.Positive(t, check.Seen()[tc.wantID], "seen: %v", check.Seen())
			require.Equal(t, check.Checked(), check.Seen()[tc.wantID])
		})
	}
}

// TestSlotCheckNamesScripts: a failure names the script when Names does.
func TestSlotCheckNamesScripts(t *testing.T) {
	t.Parallel()
	rec := &failures{TB: t}
	check := NewSlotCheck(rec)
	script := redis.NewScript(`return 2`)
	check.Names = map[string]string{script.Hash(): "two"}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	c.AddHook(check)
	c.AddHook(answerAll{})
	script.EvalSha(context.Background(), c, []string{"a", "b"})
	require.Len(t, rec.errs, 1)
	require.Contains(t, rec.errs[0], `EVALSHA of script "two" (`+script.Hash()+`)`)
}
