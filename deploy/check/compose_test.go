package check

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"
)

// loadCompose loads docker-compose.yml as `docker compose` would, with env
// as the user's .env and every profile on.
func loadCompose(t *testing.T, env ...string) (*types.Project, error) {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithName("braid"), cli.WithEnv(env), cli.WithProfiles([]string{"monitoring"}),
		cli.WithWorkingDirectory(root))
	require.NoError(t, err)
	return opts.LoadProject(context.Background())
}

var braidServices = []string{"api", "orchestrator", "worker"}

func TestComposeFileLoadsWithEveryService(t *testing.T) {
	t.Parallel()
	p, err := loadCompose(t, "BRAID_API_KEYS=admin:k:write")
	require.NoError(t, err)
	for _, name := range []string{"kafka", "redis", "api", "orchestrator", "worker", "prometheus"} {
		_, err := p.GetService(name)
		require.NoError(t, err, "service %s", name)
	}
	for _, name := range append([]string{"kafka", "redis"}, braidServices...) {
		s, _ := p.GetService(name)
		require.NotNil(t, s.HealthCheck, "%s has no health check", name)
		require.NotEmpty(t, s.HealthCheck.Test, name)
		require.NotEmpty(t, s.Restart, "%s has no restart policy", name)
	}
	for _, name := range braidServices {
		s, _ := p.GetService(name)
		require.Equal(t, []string{"CMD", "/usr/local/bin/braid-" + name, "healthcheck"}, []string(s.HealthCheck.Test), name)
		for _, dep := range []string{"kafka", "redis"} {
			require.Equal(t, types.ServiceConditionHealthy, s.DependsOn[dep].Condition, "%s waits for a healthy %s", name, dep)
		}
		require.NotNil(t, s.Build, name)
		require.Equal(t, "deploy/"+name+".Dockerfile", s.Build.Dockerfile, name)
		require.True(t, s.ReadOnly, "%s has a writable root file system", name)
		var vars []string
		for k := range s.Environment {
			if strings.HasPrefix(k, "BRAID_") {
				vars = append(vars, k)
			}
		}
		requireKnown(t, "docker-compose.yml service "+name, vars)
	}
	orch, _ := p.GetService("orchestrator")
	worker, _ := p.GetService("worker")
	require.Equal(t, 2, *orch.Deploy.Replicas)
	require.GreaterOrEqual(t, *worker.Deploy.Replicas, 2)
	require.Greater(t, worker.StopGracePeriod.String(), "", "workers drain before they are killed")
	require.Empty(t, worker.Ports, "scaled workers publish no port")

	api, _ := p.GetService("api")
	require.Len(t, api.Ports, 1)
	require.Equal(t, "127.0.0.1", api.Ports[0].HostIP, "the api is published on loopback only")
	redis, _ := p.GetService("redis")
	require.Contains(t, strings.Join(redis.Command, " "), "--appendonly yes")
	require.Equal(t, "/data", redis.Volumes[0].Target)
	require.Contains(t, p.Volumes, "redis-data")
	require.Contains(t, p.Volumes, "kafka-data")
}

func TestComposeNeedsKeysFromTheEnvFile(t *testing.T) {
	t.Parallel()
	_, err := loadCompose(t)
	require.ErrorContains(t, err, ".env.example", "without BRAID_API_KEYS the error says where keys come from")
}

// TestNoSecretIsCommitted: compose takes every secret from the user's .env
// (interpolated), .env is ignored by git, and .env.example holds no real key.
func TestNoSecretIsCommitted(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	require.NoError(t, err)
	secret := regexp.MustCompile(`(?m)^\s*(BRAID_API_KEYS|BRAID_LLM_API_KEY):\s*(.*)$`)
	found := secret.FindAllStringSubmatch(string(b), -1)
	require.Len(t, found, 2)
	for _, m := range found {
		require.True(t, strings.HasPrefix(m[2], "${"), "%s is inline in docker-compose.yml", m[1])
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^\.env$`, string(ignore))
	example, err := os.ReadFile(filepath.Join(root, ".env.example"))
	require.NoError(t, err)
	require.Contains(t, string(example), "BRAID_API_KEYS=admin:CHANGE-ME")
}
