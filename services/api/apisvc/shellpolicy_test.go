package apisvc_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/stretchr/testify/require"
)

const (
	shellDef = `{"name": "with-shell", "nodes": [{"id": "a", "handler": "noop"}, {"id": "sh", "handler": "shell", "depends_on": ["a"], "config": {"command": "id"}}]}`
	// legacyShellDef is seed 002's format, whose steps are shell commands.
	legacyShellDef = `{"name": "legacy-shell", "steps": [{"id": "x", "command": "echo hi"}]}`
	plainDef       = `{"name": "no-shell", "nodes": [{"id": "a", "handler": "noop"}, {"id": "h", "handler": "http", "config": {"url": "https://example.com", "mock": true}}]}`
)

// TestShellPolicy: with BRAID_API_SHELL_KEYS set, a write key outside it
// cannot register a workflow with a shell node, in any accepted format
// (403 naming the node), and can register anything else; a key inside it
// can.
func TestShellPolicy(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{shellKeys: []string{}})
	for _, def := range []string{shellDef, legacyShellDef} {
		r := e.must(req{method: "POST", path: "/workflows", body: def}, http.StatusForbidden)
		p := r.problem(t)
		require.Contains(t, p.Detail, "may not register workflows that use the shell handler")
		require.Contains(t, p.Detail, "BRAID_API_SHELL_KEYS")
	}
	e.must(req{method: "GET", path: "/workflows/with-shell"}, http.StatusNotFound)
	e.register(plainDef)

	allowed := setup(t, envOpts{shellKeys: []string{writeKey}})
	allowed.register(shellDef)
	open := setup(t, envOpts{})
	open.register(shellDef)
}

func TestShellPolicyNamesMustBeWriteKeys(t *testing.T) {
	t.Parallel()
	kafka := testinfra.StartKafka(t)
	rdb := testinfra.StartRedis(t).Client(t)
	keys := []apisvc.APIKey{{Name: "w", Key: "w-secret-0123456789abcdef", Role: apisvc.RoleWrite}, {Name: "r", Key: "r-secret-0123456789abcdef", Role: apisvc.RoleRead}}
	for name, want := range map[string]string{"nobody": `no API key is named "nobody"`, "r": `key "r" is not a write key`} {
		_, err := apisvc.New(context.Background(), apisvc.Config{APIKeys: keys, ShellKeys: []string{name},
			Bus: eventbus.Config{Brokers: []string{kafka.Addr}}, Redis: rdb})
		require.ErrorContains(t, err, want)
	}
}
