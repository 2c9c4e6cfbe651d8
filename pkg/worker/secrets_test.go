package worker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/braidhq/braid/pkg/worker"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// leaky hands back everything it was given: in its output (value, key and
// number), its log and its error.
func leaky(fail bool) worker.Handler {
	return worker.HandlerFunc(func(_ context.Context, task *worker.Task) (any, error) {
		cfg := string(task.Config)
		task.Log("stdout", "config is "+cfg)
		task.Log("stderr", "line two of the key: cond-line-2")
		out := map[string]any{"config": task.Config, "s3cr3t-value": "as a key", "n": 424242}
		if fail {
			return out, errors.New("failed with " + cfg)
		}
		return out, nil
	})
}

func TestSecretsAreFilledAndMaskedEverywhere(t *testing.T) {
	t.Parallel()
	store := worker.SecretMap{"TOKEN": "s3cr3t-value", "NUM": "424242", "PEM": "cond-line-1\ncond-line-2", "Q": `q"uoted<&>`}
	for _, fail := range []bool{false, true} {
		b := setup(t, map[string]worker.Handler{"leaky": leaky(fail)}, func(c *worker.Config) { c.Secrets = store })
		d := b.queued("run1", "a", "leaky", `{"auth":"","n":"","pem":"","q":""}`)
		d.SecretSlots = []*eventsv1.SecretSlot{
			{Path: "/auth", Parts: []*eventsv1.SecretPart{{Text: "Bearer "}, {Secret: "TOKEN"}}},
			{Path: "/n", Parts: []*eventsv1.SecretPart{{Secret: "NUM"}}},
			{Path: "/pem", Parts: []*eventsv1.SecretPart{{Secret: "PEM"}}},
			{Path: "/q", Parts: []*eventsv1.SecretPart{{Secret: "Q"}}},
		}
		b.dispatch(d)
		st := succeeded
		if fail {
			st = eventsv1.TaskStatus_TASK_STATUS_FAILED
		}
		r := b.result("run1", "a", st)
		out := string(r.GetOutput())
		require.Contains(t, out, `"auth":"Bearer ***"`, "the handler got the value; the output shows ***")
		require.Contains(t, out, `"n":"***"`)
		require.Contains(t, out, `"***":"as a key"`)
		var lines []string
		for _, l := range b.logLines("run1", "a", 1) {
			lines = append(lines, l.Text)
		}
		all := out + r.GetError() + strings.Join(lines, "\n")
		for _, v := range []string{"s3cr3t-value", "424242", "cond-line-1", "cond-line-2", `q"uoted`, `q\"uoted`, `q\u0022uoted`} {
			require.NotContains(t, all, v, "a secret value was reported")
		}
		require.Contains(t, strings.Join(lines, "\n"), `Bearer ***`)
		if fail {
			require.Contains(t, r.GetError(), "Bearer ***")
		}
		b.stop()
	}
}

func TestMissingSecretFailsPermanentlyNamingIt(t *testing.T) {
	t.Parallel()
	for name, store := range map[string]worker.Secrets{"no store": nil, "unknown name": worker.SecretMap{"OTHER": "x"}} {
		var calls atomic.Int64
		b := setup(t, map[string]worker.Handler{"h": echo(&calls)}, func(c *worker.Config) { c.Secrets = store })
		d := b.queued("run1", "a", "h", `{"k":""}`)
		d.SecretSlots = []*eventsv1.SecretSlot{{Path: "/k", Parts: []*eventsv1.SecretPart{{Secret: "TOKEN"}}}}
		b.dispatch(d)
		r := b.result("run1", "a", eventsv1.TaskStatus_TASK_STATUS_FAILED)
		require.True(t, r.GetPermanent(), name)
		if store == nil {
			require.Contains(t, r.GetError(), "no secrets configured", name)
		} else {
			require.Contains(t, r.GetError(), `secret "TOKEN" is not configured on worker`, name)
		}
		require.Zero(t, calls.Load(), "%s: the handler ran without its secret", name)
		b.stop()
	}
}

func TestSecretDirAndChain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "DB_PASSWORD"), []byte("pw-from-file\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "CRLF"), []byte("v\r\n"), 0o600))
	s := worker.SecretChain{worker.SecretMap{"A": "from-env"}, worker.SecretDir(dir)}
	for name, want := range map[string]string{"A": "from-env", "DB_PASSWORD": "pw-from-file", "CRLF": "v"} {
		v, ok := s.Secret(name)
		require.True(t, ok, name)
		require.Equal(t, want, v, name)
	}
	for _, name := range []string{"MISSING", "../etc/passwd", "a/b", "..", ""} {
		_, ok := s.Secret(name)
		require.False(t, ok, "%q", name)
	}
}
