// Command kfakebroker runs a one-broker kfake Kafka-protocol cluster as its
// own OS process, persisting to a data directory, so that the e2e fault suite
// can SIGKILL, SIGSTOP and restart the broker alone (braid dev --only infra
// holds the broker and Redis in one process). It prints
// "export BRAID_KAFKA_BROKERS=<addr>" once it listens and saves its state on
// SIGTERM or SIGINT.
//
//	kfakebroker -addr 127.0.0.1:19092 -data-dir DIR [-partitions 6]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/braidhq/braid/pkg/devinfra/devbroker"
	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:19092", "listen address")
	dir := flag.String("data-dir", "", "directory the broker persists to (required)")
	parts := flag.Int("partitions", 6, "partitions of topics the broker creates")
	flag.Parse()
	if *dir == "" || *parts < 1 {
		fmt.Fprintln(os.Stderr, "kfakebroker: -data-dir is required and -partitions must be positive")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := kfake.NewCluster(append(devbroker.Options(*dir, *parts),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, *addr) }))...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfakebroker: listen %s data %s: %v\n", *addr, *dir, err)
		os.Exit(1)
	}
	fmt.Printf("export BRAID_KAFKA_BROKERS=%s\n", c.ListenAddrs()[0])
	<-ctx.Done()
	c.Close()
	fmt.Println("kfakebroker stopped")
}
