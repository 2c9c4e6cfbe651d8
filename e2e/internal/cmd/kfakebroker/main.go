// Command kfakebroker runs a kfake Kafka-protocol cluster of one or more
// brokers as its own OS process, persisting to a data directory, so that
// the e2e fault suite can SIGKILL, SIGSTOP and restart the brokers alone
// (braid dev --only infra holds the broker and Redis in one process). It
// prints "export BRAID_KAFKA_BROKERS=<addr>[,<addr>...]" (every broker, by
// node id) once it listens, elects a new leader for every partition on
// SIGUSR1 (kfake's ShufflePartitionLeaders: a leader move the services
// must ride out), stops broker 0 on SIGUSR2 and starts it again on the next
// SIGUSR2 (a broker's death: its listener and every connection it accepted
// are closed, and kfake elects new leaders among the others), and saves its
// state on SIGTERM or SIGINT.
//
//	kfakebroker -addr 127.0.0.1:19092 -data-dir DIR [-brokers 1] [-partitions 6]
//	kfakebroker -addr 127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094 -data-dir DIR
//
// -addr lists one address per broker, or one address for all of them: the
// brokers then listen on its port and the ports after it (port 0: each on
// a free port). kfake keeps one copy of the data for the whole cluster and
// makes the last broker the controller.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/braidhq/braid/pkg/devinfra/devbroker"
	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:19092", "listen address, or one comma-separated address per broker")
	dir := flag.String("data-dir", "", "directory the cluster persists to (required)")
	parts := flag.Int("partitions", 6, "partitions of topics the cluster creates")
	brokers := flag.Int("brokers", 0, "brokers to start (default: one per -addr address)")
	flag.Parse()
	host, ports, err := listenPorts(*addr, *brokers)
	if err == nil && (*dir == "" || *parts < 1) {
		err = fmt.Errorf("-data-dir is required and -partitions must be positive")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfakebroker: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conns := devbroker.NewConnTracker()
	c, err := kfake.NewCluster(append(devbroker.Options(*dir, *parts), kfake.Ports(ports...),
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			_, port, _ := net.SplitHostPort(address) // kfake asks for 127.0.0.1:<port>
			return conns.Listen(network, net.JoinHostPort(host, port))
		}))...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfakebroker: listen %s data %s: %v\n", *addr, *dir, err)
		os.Exit(1)
	}
	devbroker.PrepareSegments(c, *dir, *parts)
	fmt.Printf("export BRAID_KAFKA_BROKERS=%s\n", strings.Join(c.ListenAddrs(), ","))
	shuffleOnSignal(ctx, c)
	toggleOnSignal(ctx, c, conns)
	<-ctx.Done()
	c.Close()
	fmt.Println("kfakebroker stopped")
}

// listenPorts returns the host and the port of each broker for -addr and
// -brokers (0: one broker per address). Several addresses must share a
// host and match -brokers; one address with more brokers gives ports
// counting up from its port, or all 0 (a free port each) when it is 0.
func listenPorts(addrs string, brokers int) (string, []int, error) {
	var host string
	var ports []int
	for _, a := range strings.Split(addrs, ",") {
		h, p, err := net.SplitHostPort(strings.TrimSpace(a))
		if err != nil {
			return "", nil, fmt.Errorf("-addr %q: %w", a, err)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || (host != "" && h != host) {
			return "", nil, fmt.Errorf("-addr %q: want host:port, every broker on one host", addrs)
		}
		host, ports = h, append(ports, n)
	}
	switch {
	case brokers == 0 || brokers == len(ports):
		return host, ports, nil
	case len(ports) > 1 || brokers < 0:
		return "", nil, fmt.Errorf("-brokers %d does not match the %d addresses of -addr", brokers, len(ports))
	}
	for i := 1; i < brokers; i++ {
		next := 0
		if ports[0] != 0 {
			next = ports[0] + i
		}
		ports = append(ports, next)
	}
	return host, ports, nil
}

// shuffleOnSignal gives every partition of c a new leader on each SIGUSR1
// until ctx ends.
func shuffleOnSignal(ctx context.Context, c *kfake.Cluster) {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		defer signal.Stop(usr1)
		for {
			select {
			case <-ctx.Done():
				return
			case <-usr1:
				c.ShufflePartitionLeaders()
				fmt.Println("kfakebroker: partition leaders shuffled")
			}
		}
	}()
}

// toggleOnSignal stops broker 0 on a SIGUSR2 and starts it again, on its
// port, on the next, until ctx ends. Broker 0 is never kfake's controller
// (the last broker) in a cluster of two or more.
func toggleOnSignal(ctx context.Context, c *kfake.Cluster, conns *devbroker.ConnTracker) {
	addrs := c.ListenAddrs()
	if len(addrs) < 2 {
		return
	}
	_, p, _ := net.SplitHostPort(addrs[0])
	port, _ := strconv.Atoi(p)
	usr2 := make(chan os.Signal, 1)
	signal.Notify(usr2, syscall.SIGUSR2)
	go func() {
		defer signal.Stop(usr2)
		up := true
		for {
			select {
			case <-ctx.Done():
				return
			case <-usr2:
			}
			var err error
			if up {
				if err = c.RemoveNode(0); err == nil {
					conns.Drop(addrs[0])
				}
			} else {
				_, _, err = c.AddNode(0, port)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "kfakebroker: toggle broker 0: %v\n", err)
				continue
			}
			up = !up
			fmt.Printf("kfakebroker: broker 0 (%s) up=%t\n", addrs[0], up)
		}
	}()
}
