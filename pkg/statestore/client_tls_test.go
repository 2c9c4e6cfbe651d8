package statestore_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

// startTLSRedis runs redis-server with TLS only (no plaintext port), its
// certificate signed by ca, and a password; it is killed by PID on cleanup.
func startTLSRedis(t *testing.T, ca testinfra.CA, password string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	require.NoError(t, os.WriteFile(conf, []byte("requirepass "+password+"\n"), 0o600))
	cmd := exec.Command("redis-server", conf, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", ca.CertFile, "--tls-key-file", ca.KeyFile, "--tls-ca-cert-file", ca.CAFile,
		"--tls-auth-clients", "no", "--dir", dir, "--save", "", "--logfile", filepath.Join(dir, "redis.log"))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "redis-server with TLS did not listen")
	return addr
}

// TestNewClientTLS: a rediss:// URL verified against the test's CA (as
// BRAID_REDIS_TLS_CA_FILE gives it) connects and authenticates; without the
// CA the certificate is refused; plaintext or a wrong password fails; a CA
// with a redis:// URL is refused as a mistake; no error shows the password.
func TestNewClientTLS(t *testing.T) {
	t.Parallel()
	ca := testinfra.NewCA(t)
	pw := "pw-tls-0123456789"
	addr := startTLSRedis(t, ca, pw)
	ctx := context.Background()
	c, err := statestore.NewClient(ctx, "rediss://:"+pw+"@"+addr+"/0", 5*time.Second, ca.Pool)
	require.NoError(t, err)
	require.NoError(t, c.Set(ctx, "braid:tls", "ok", 0).Err())
	require.NoError(t, c.Close())

	for name, try := range map[string]func() error{
		"system roots": func() error {
			_, err := statestore.NewClient(ctx, "rediss://:"+pw+"@"+addr+"/0", 3*time.Second)
			return err
		},
		"plaintext": func() error {
			_, err := statestore.NewClient(ctx, "redis://:"+pw+"@"+addr+"/0", 3*time.Second)
			return err
		},
		"wrong password": func() error {
			_, err := statestore.NewClient(ctx, "rediss://:wrong-"+pw+"@"+addr+"/0", 3*time.Second, ca.Pool)
			return err
		},
		"CA without TLS": func() error {
			_, err := statestore.NewClient(ctx, "redis://:"+pw+"@"+addr+"/0", 3*time.Second, ca.Pool)
			return err
		},
		"bad URL": func() error {
			_, err := statestore.NewClient(ctx, "redis://:"+pw+"@"+addr+":bad/0", 3*time.Second)
			return err
		},
	} {
		err := try()
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "456789", "%s: the error shows (part of) the password", name)
	}
}
