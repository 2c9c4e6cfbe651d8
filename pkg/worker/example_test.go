package worker_test

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/worker"
)

// A worker binary of your own, offering one handler ("shout") beside the
// stock workers: it joins the consumer group of its handler set
// (worker.GroupFor), sees every dispatch, and claims only those of
// "shout"; the stock workers leave those to it. Point it at braid dev's
// broker and Redis with the export line braid dev prints
// (BRAID_KAFKA_BROKERS=127.0.0.1:19092,
// BRAID_REDIS_URL=redis://:$(cat .braid/redis-password)@127.0.0.1:16379/0).
func ExampleNew() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rdb, err := statestore.NewClient(ctx, os.Getenv("BRAID_REDIS_URL"), 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	w, err := worker.New(worker.Config{
		Bus:         eventbus.Config{Brokers: strings.Split(os.Getenv("BRAID_KAFKA_BROKERS"), ",")},
		Redis:       rdb,
		Concurrency: 8,
		Handlers: map[string]worker.Handler{
			"shout": worker.HandlerFunc(func(ctx context.Context, t *worker.Task) (any, error) {
				var cfg struct {
					Text string `json:"text"`
				}
				if err := json.Unmarshal(t.Config, &cfg); err != nil {
					return nil, worker.Permanent(err) // retrying cannot fix a bad config
				}
				t.Log("handler", "shouting "+cfg.Text)
				return map[string]string{"text": strings.ToUpper(cfg.Text)}, nil
			}),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil { // until SIGINT/SIGTERM: then it drains
		log.Fatal(err)
	}
}
