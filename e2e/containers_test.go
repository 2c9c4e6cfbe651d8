package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	tckafka "github.com/testcontainers/testcontainers-go/modules/kafka"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
)

// Container images of the testcontainers path.
const (
	kafkaImage = "confluentinc/confluent-local:7.5.0"
	redisImage = "redis:7-alpine"
)

// dockerHealthy reports why no Docker engine can be used, or nil.
// testcontainers panics when it finds no Docker host at all.
func dockerHealthy(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Health(ctx)
}

// TestStackContainers runs the seed scenarios against Kafka and Redis in
// containers (testcontainers-go) with the three services as local
// processes: the same stack as the other tests, on real Kafka.
func TestStackContainers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	hctx, hcancel := context.WithTimeout(ctx, 10*time.Second)
	err := dockerHealthy(hctx)
	hcancel()
	if err != nil {
		t.Skipf("no Docker engine: the process stack covers these scenarios (%v)", firstLine(err))
	}
	kc, err := tckafka.Run(ctx, kafkaImage, tckafka.WithClusterID("braid-e2e"))
	testcontainers.CleanupContainer(t, kc)
	require.NoError(t, err)
	brokers, err := kc.Brokers(ctx)
	require.NoError(t, err)
	rc, err := tcredis.Run(ctx, redisImage, testcontainers.WithCmd("redis-server", "--appendonly", "yes"))
	testcontainers.CleanupContainer(t, rc)
	require.NoError(t, err)
	redisURL, err := rc.ConnectionString(ctx)
	require.NoError(t, err)

	s, stop := StartStack(t, stackOpts{workers: 2, kafka: strings.Join(brokers, ","), redisURL: redisURL})
	t.Cleanup(stop)
	s.dumpOnFailure(t)
	c := s.client(t)
	for _, file := range []string{"seed-000-example-workflow.json", "seed-004-fan-out-fan-in.json"} {
		name, _ := c.register(readExample(t, file))
		r := c.waitDone(c.start(name, `{}`), 2*runTimeout)
		require.Equal(t, "succeeded", r.Status, "%s: %s", file, r.Error)
	}
}

// firstLine keeps error messages short in skip notices.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
