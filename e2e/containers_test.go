package e2e

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
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

// infraEnv selects where StartStack's Kafka and Redis come from when a test
// does not bring its own: "processes" (default: `braid dev --only infra` on
// free loopback ports) or "containers" (Kafka and Redis containers started
// once per test process by testcontainers-go; `make e2e-docker`). The fault
// suite always runs its own processes: it SIGSTOPs and kills them.
const infraEnv = "BRAID_E2E_INFRA"

// containerMode reports whether BRAID_E2E_INFRA asks for containers. Any
// value other than "", "processes" or "containers" is a mistake that would
// otherwise silently run the process stack.
func containerMode(t testing.TB) bool {
	switch v := os.Getenv(infraEnv); v {
	case "", "processes":
		return false
	case "containers":
		return true
	default:
		t.Fatalf("%s=%q: want processes or containers", infraEnv, v)
		return false
	}
}

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

// containers is the Kafka and Redis pair of this test process: started by
// the first test that needs it, terminated by TestMain.
var containers struct {
	once            sync.Once
	kafka, redisURL string
	// noEngine says why there is no Docker engine ("" when there is one);
	// err is a failure to start the containers on a working engine.
	noEngine string
	err      error
	stop     []func()
}

// containerStartTimeout bounds pulling and starting both containers.
const containerStartTimeout = 5 * time.Minute

// containerInfra returns the addresses of the process's Kafka and Redis
// containers, starting them on first use. Without a Docker engine it skips
// t with the reason: that is an environment without containers, not a
// failure of the product.
func containerInfra(t testing.TB) (kafka, redisURL string) {
	t.Helper()
	containers.once.Do(startContainers)
	if containers.noEngine != "" {
		t.Skipf("no Docker engine, so nothing runs on containers here; `make test` runs these scenarios on local processes (%s)", containers.noEngine)
	}
	if containers.err != nil {
		t.Fatalf("containers: %v", containers.err)
	}
	return containers.kafka, containers.redisURL
}

// requireEngine skips t, before any shared state is touched, when
// containers are asked for and no engine exists.
func requireEngine(t testing.TB) {
	t.Helper()
	if containerMode(t) {
		containerInfra(t)
	}
}

func startContainers() {
	ctx, cancel := context.WithTimeout(context.Background(), containerStartTimeout)
	defer cancel()
	hctx, hcancel := context.WithTimeout(ctx, 10*time.Second)
	err := dockerHealthy(hctx)
	hcancel()
	if err != nil {
		containers.noEngine = firstLine(err)
		return
	}
	kc, err := tckafka.Run(ctx, kafkaImage, tckafka.WithClusterID("braid-e2e"))
	containers.stop = append(containers.stop, terminator(kc))
	if err != nil {
		containers.err = fmt.Errorf("kafka %s: %w", kafkaImage, err)
		return
	}
	brokers, err := kc.Brokers(ctx)
	if err != nil {
		containers.err = fmt.Errorf("kafka brokers: %w", err)
		return
	}
	rc, err := tcredis.Run(ctx, redisImage, testcontainers.WithCmd("redis-server", "--appendonly", "yes"))
	containers.stop = append(containers.stop, terminator(rc))
	if err != nil {
		containers.err = fmt.Errorf("redis %s: %w", redisImage, err)
		return
	}
	containers.redisURL, containers.err = rc.ConnectionString(ctx)
	containers.kafka = strings.Join(brokers, ",")
}

// terminator stops c (which may be nil after a failed Run) within a bound.
func terminator(c testcontainers.Container) func() {
	return func() {
		if c == nil {
			return
		}
		if err := testcontainers.TerminateContainer(c, testcontainers.StopTimeout(30*time.Second)); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: terminate container: %v\n", err)
		}
	}
}

// stopContainers terminates the process's containers (from TestMain).
func stopContainers() {
	for _, stop := range containers.stop {
		stop()
	}
}

// TestStackContainers runs seed scenarios against Kafka and Redis in
// containers with the three services as local processes, whatever
// BRAID_E2E_INFRA says: wherever a Docker engine exists, `make test` sees
// the product on real Apache Kafka at least once.
func TestStackContainers(t *testing.T) {
	t.Parallel()
	kafka, redisURL := containerInfra(t)
	s, stop := StartStack(t, stackOpts{workers: 2, kafka: kafka, redisURL: redisURL})
	t.Cleanup(stop)
	s.dumpOnFailure(t)
	c := s.client(t)
	for _, file := range []string{"seed-000-example-workflow.json", "seed-004-fan-out-fan-in.json"} {
		name, _ := c.register(readExample(t, file))
		r := c.waitDone(c.start(name, `{}`), 2*runTimeout)
		require.Equal(t, "succeeded", r.Status, "%s: %s", file, r.Error)
	}
}

// TestContainerModeSkipsWithoutEngine: where no engine exists, asking for
// the containers skips with the reason instead of failing (what every stack
// test of `make e2e-docker` does there).
func TestContainerModeSkipsWithoutEngine(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := dockerHealthy(ctx); err == nil {
		t.Skip("a Docker engine is available: TestStackContainers runs on it instead")
	}
	var skipped bool
	var reason string
	done := make(chan struct{})
	go func() {
		defer close(done)
		inner := &recordingTB{TB: t}
		defer func() { skipped, reason = inner.skipped, inner.reason }()
		containerInfra(inner)
	}()
	<-done
	require.True(t, skipped, "containers asked for without an engine must skip")
	require.Contains(t, reason, "no Docker engine")
}

// recordingTB records Skipf instead of skipping the real test (Skipf ends
// the goroutine it runs on, as testing.T's does).
type recordingTB struct {
	testing.TB
	skipped bool
	reason  string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped, r.reason = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// firstLine keeps error messages short in skip notices.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
