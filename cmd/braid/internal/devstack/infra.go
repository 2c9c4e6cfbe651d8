package devstack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os/exec"

	"github.com/braidhq/braid/pkg/devinfra/devbroker"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/twmb/franz-go/pkg/kfake"
)

// infra is the running broker and Redis.
type infra struct {
	kafkaAddr string
	redis     redisBackend
	// redisPassword is required of every Redis client (generated once per
	// data dir, see loadOrCreateRedisPassword).
	redisPassword string
	broker        *kfake.Cluster
	// brokerLn is the broker's listener: the services dial it in process.
	brokerLn *devbroker.Local
	logger   *slog.Logger
}

// redisURL is the URL services connect to.
func (i *infra) redisURL() string {
	u := url.URL{Scheme: "redis", Host: i.redis.Addr(), Path: "/0"}
	if i.redisPassword != "" {
		u.User = url.UserPassword("", i.redisPassword)
	}
	return u.String()
}

// startInfra checks the ports, then starts the broker and Redis. warn
// receives the loud warning when Redis falls back to the embedded server.
func startInfra(ctx context.Context, cfg Config, warn io.Writer) (*infra, error) {
	if err := checkFree("--kafka-addr", cfg.KafkaAddr); err != nil {
		return nil, err
	}
	if err := checkFree("--redis-addr", cfg.RedisAddr); err != nil {
		return nil, err
	}
	broker, local, err := startBroker(cfg.DataDir, cfg.KafkaAddr)
	if err != nil {
		return nil, err
	}
	pw, err := loadOrCreateRedisPassword(cfg.DataDir)
	if err != nil {
		broker.Close()
		return nil, err
	}
	rb, err := startRedis(ctx, cfg, pw, warn)
	if err != nil {
		broker.Close()
		return nil, err
	}
	i := &infra{kafkaAddr: broker.ListenAddrs()[0], redis: rb, broker: broker, brokerLn: local, logger: cfg.Logger, redisPassword: pw}
	i.logger.Info("infrastructure up", logkey.Kafka, i.kafkaAddr, logkey.Redis, rb.Addr(), logkey.DurableRedis, rb.Durable())
	return i, nil
}

// startRedis starts redis-server when it is on PATH (and not overridden),
// else the embedded fallback with a loud warning.
func startRedis(ctx context.Context, cfg Config, password string, warn io.Writer) (redisBackend, error) {
	bin, err := exec.LookPath("redis-server")
	if err == nil && !cfg.EmbeddedRedis {
		return startRedisServer(ctx, bin, cfg.DataDir, cfg.RedisAddr, password)
	}
	reason := "redis-server is not on PATH (install it: apt-get install redis-server / brew install redis)"
	if cfg.EmbeddedRedis {
		reason = "the embedded Redis was asked for"
	}
	fmt.Fprintf(warn, "\n"+
		"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"+
		"!! WARNING: %s.\n"+
		"!! Using an embedded in-memory Redis instead: runs, workflows and outputs\n"+
		"!! WILL NOT SURVIVE A RESTART of braid dev.\n"+
		"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n", reason)
	return startEmbeddedRedis(cfg.RedisAddr, password)
}

// stop stops Redis (SIGTERM by PID, bounded by ctx), then closes the broker,
// which persists its state to the data dir.
func (i *infra) stop(ctx context.Context) {
	if err := i.redis.Stop(ctx); err != nil {
		i.logger.Error("stop redis", logkey.Err, err)
	}
	closed := make(chan struct{})
	go func() { i.broker.Close(); close(closed) }()
	select {
	case <-closed:
		i.logger.Info("infrastructure stopped")
	case <-ctx.Done():
		i.logger.Error("kafka broker did not close in time; its last writes may be lost")
	}
}
