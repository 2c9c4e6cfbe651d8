package apisvc_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestAuth(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	name, _ := e.register(`{"name": "auth-wf", "nodes": [{"id": "a", "handler": "noop"}]}`)
	tests := []struct {
		name   string
		r      req
		status int
	}{
		{"no key", req{method: "GET", path: "/workflows", key: "-"}, http.StatusUnauthorized},
		{"wrong key", req{method: "GET", path: "/workflows", key: "nope-" + writeSecret}, http.StatusUnauthorized},
		{"key prefix", req{method: "GET", path: "/workflows", key: writeSecret[:10]}, http.StatusUnauthorized},
		{"empty bearer", req{method: "GET", path: "/workflows", key: "-", header: map[string]string{"Authorization": "Bearer "}}, http.StatusUnauthorized},
		{"basic scheme", req{method: "GET", path: "/workflows", key: "-", header: map[string]string{"Authorization": "Basic " + writeSecret}}, http.StatusUnauthorized},
		{"read key on register", req{method: "POST", path: "/workflows", key: readSecret, body: `{"name":"x","nodes":[{"id":"a","handler":"noop"}]}`}, http.StatusForbidden},
		{"read key on run", req{method: "POST", path: "/workflows/" + name + "/runs", key: readSecret}, http.StatusForbidden},
		{"read key on delete", req{method: "DELETE", path: "/workflows/" + name, key: readSecret}, http.StatusForbidden},
		{"read key on cancel", req{method: "POST", path: "/runs/r1/cancel", key: readSecret}, http.StatusForbidden},
		{"no key on run", req{method: "POST", path: "/workflows/" + name + "/runs", key: "-"}, http.StatusUnauthorized},
		{"no key on events", req{method: "GET", path: "/runs/r1/events", key: "-"}, http.StatusUnauthorized},
		{"read key reads", req{method: "GET", path: "/workflows/" + name, key: readSecret}, http.StatusOK},
		{"bearer read key reads", req{method: "GET", path: "/workflows", key: "-", header: map[string]string{"Authorization": "Bearer " + readSecret}}, http.StatusOK},
		{"bearer write key", req{method: "GET", path: "/workers", key: "-", header: map[string]string{"Authorization": "bearer " + writeSecret}}, http.StatusOK},
		{"healthz is public", req{method: "GET", path: "/healthz", key: "-"}, http.StatusOK},
		{"metrics is public", req{method: "GET", path: "/metrics", key: "-"}, http.StatusOK},
		{"openapi is public", req{method: "GET", path: "/openapi.json", key: "-"}, http.StatusOK},
	}
	for _, tc := range tests {
		resp := e.do(tc.r)
		require.Equal(t, tc.status, resp.Status, "%s: %s", tc.name, resp.Body)
		if tc.status >= 400 {
			p := resp.problem(t)
			require.NotContains(t, p.Detail, writeSecret, tc.name)
			require.NotContains(t, p.Detail, readSecret, tc.name)
		}
		if tc.status == http.StatusUnauthorized {
			require.NotEmpty(t, resp.Header.Get("WWW-Authenticate"), tc.name)
		}
	}
	p := e.must(req{method: "POST", path: "/workflows/" + name + "/runs", key: readSecret}, http.StatusForbidden).problem(t)
	require.Equal(t, `API key "viewer" has role read; POST /workflows/{name}/runs needs a write key`, p.Detail, "the route as the API reference writes it")
	p = e.must(req{method: "POST", path: "/runs/r1/tasks/gate/approve", key: readSecret}, http.StatusForbidden).problem(t)
	require.Contains(t, p.Detail, "POST /runs/{id}/tasks/{node}/approve needs a write key")
	var checked struct {
		Valid bool `json:"valid"`
	}
	e.must(req{method: "POST", path: "/workflows/validate", key: readSecret, body: `{"name":"x","nodes":[{"id":"a","handler":"noop"}]}`}, http.StatusOK).json(t, &checked)
	require.True(t, checked.Valid, "validating changes nothing: a read key may")

	logs := e.logs.String()
	require.Contains(t, logs, `"key_name":"admin"`, "requests are logged with the key's name")
	require.NotContains(t, logs, writeSecret, "the write key leaked into the logs")
	require.NotContains(t, logs, readSecret, "the read key leaked into the logs")
	require.NotContains(t, logs, writeSecret[:10], "part of the write key leaked into the logs")
}

func TestNewRefusesToStartWithoutKeys(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = rdb.Close() })
	_, err := apisvc.New(context.Background(), apisvc.Config{Redis: rdb, Bus: eventbus.Config{Brokers: []string{"127.0.0.1:1"}}})
	require.Error(t, err)
	require.Contains(t, err.Error(), "BRAID_API_KEYS=name:key:role")
	require.Contains(t, err.Error(), "BRAID_AUTH=off")
}

func TestAuthOff(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	off, err := apisvc.New(context.Background(), apisvc.Config{AuthOff: true, Bus: e.bus, Redis: e.rdb, Keys: e.keys})
	require.NoError(t, err)
	t.Cleanup(func() { _ = off.Close() })
	c := newClient(t, "")
	r := c.request(t, req{method: "GET", path: "/workflows", key: "-"})
	w := newRecorder()
	off.Handler().ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
}

func TestParseKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    string
		want    []apisvc.APIKey
		wantErr string
	}{
		{"one", "ci:abc:write", []apisvc.APIKey{{Name: "ci", Key: "abc", Role: apisvc.RoleWrite}}, ""},
		{"two with spaces", " ci:abc:write , ui:def:read ", []apisvc.APIKey{{Name: "ci", Key: "abc", Role: apisvc.RoleWrite}, {Name: "ui", Key: "def", Role: apisvc.RoleRead}}, ""},
		{"key with colons", "ci:a:b:c:read", []apisvc.APIKey{{Name: "ci", Key: "a:b:c", Role: apisvc.RoleRead}}, ""},
		{"empty", "", nil, ""},
		{"missing role", "ci:sekrit", nil, "want name:key:role"},
		{"bad role", "ci:sekrit:admin", nil, `role "admin"`},
		{"empty key", "ci::read", nil, "is empty"},
		{"bad name", "c i:sekrit:read", nil, "key name"},
		{"duplicate", "ci:sekrit1:read,ci:sekrit2:write", nil, "used twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := apisvc.ParseKeys(tc.spec)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.NotContains(t, err.Error(), "sekrit", "errors never show keys")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestAPIKeyNeverPrinted(t *testing.T) {
	t.Parallel()
	k := apisvc.APIKey{Name: "ci", Key: "sekrit", Role: apisvc.RoleWrite}
	var b strings.Builder
	logger := newTextLogger(&b)
	logger.Info("key", "key", k)
	require.NotContains(t, b.String()+k.String(), "sekrit")
	require.Contains(t, b.String(), "ci")
}
