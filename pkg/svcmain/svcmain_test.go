package svcmain

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

type env struct{ set Settings }

func (e env) MainSettings() Settings { return e.set }

func loadOK(e env) func() (env, error) { return func() (env, error) { return e, nil } }

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// Not parallel: these tests share the process's signal handling.

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name    string
		loadErr error
		runErr  error
		want    int
		wantLog string
	}{
		{name: "clean stop", want: ExitOK},
		{name: "bad environment", loadErr: errors.New("BRAID_X: bad"), want: ExitConfig, wantLog: "svc cannot start"},
		{name: "bad setting found by run", runErr: BadConfig(errors.New("BRAID_API_KEYS: bad")), want: ExitConfig, wantLog: "svc cannot start"},
		{name: "failure", runErr: errors.New("broker gone"), want: ExitFailed, wantLog: "svc failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			ran := false
			code := main(nil, &out, "svc", func() (env, error) { return env{}, tt.loadErr },
				func(context.Context, env, *slog.Logger) error { ran = true; return tt.runErr })
			require.Equal(t, tt.want, code)
			require.Equal(t, tt.loadErr == nil, ran, "run only with a valid environment")
			require.Contains(t, out.String(), tt.wantLog)
		})
	}
}

func TestSignalEndsRunAndCleanupsRunBeforeReturn(t *testing.T) {
	pprof := freeAddr(t)
	var out bytes.Buffer
	code := main(nil, &out, "svc", loadOK(env{Settings{PprofAddr: pprof}}), func(ctx context.Context, _ env, _ *slog.Logger) error {
		res, err := http.Get("http://" + pprof + "/debug/pprof/")
		require.NoError(t, err)
		res.Body.Close()
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
		<-ctx.Done() // the signal ends the context instead of the process
		return nil
	})
	require.Equal(t, ExitOK, code)
	_, err := net.Dial("tcp", pprof)
	require.Error(t, err, "pprof is stopped by the time Main returns")
}

func TestBadPprofAddrIsAConfigError(t *testing.T) {
	var out bytes.Buffer
	code := main(nil, &out, "svc", loadOK(env{Settings{PprofAddr: "256.0.0.1:bad"}}),
		func(context.Context, env, *slog.Logger) error { t.Fatal("run must not be called"); return nil })
	require.Equal(t, ExitConfig, code)
}

func TestHealthcheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	noRun := func(context.Context, env, *slog.Logger) error { t.Fatal("run must not be called"); return nil }
	addr := srv.Listener.Addr().String()
	var out bytes.Buffer
	require.Equal(t, 0, main([]string{"healthcheck"}, &out, "svc", loadOK(env{Settings{HealthAddr: addr}}), noRun))
	// Even with a bad environment: the probe uses the address it could read.
	bad := func() (env, error) { return env{Settings{HealthAddr: addr}}, errors.New("BRAID_X: bad") }
	require.Equal(t, 0, main([]string{"healthcheck"}, &out, "svc", bad, noRun))
	require.Equal(t, 1, main([]string{"healthcheck"}, &out, "svc", loadOK(env{Settings{HealthAddr: freeAddr(t)}}), noRun))
}
