package devstack

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/braidhq/braid/pkg/devinfra/devbroker"
	"github.com/twmb/franz-go/pkg/kfake"
)

// kafkaPartitions is the partition count of topics the broker creates.
const kafkaPartitions = 6

// startBroker starts a one-broker kfake cluster listening on addr and
// persisting under dataDir/kafka, reloading what an earlier run saved.
func startBroker(dataDir, addr string) (*kfake.Cluster, *devbroker.Local, error) {
	dir := filepath.Join(dataDir, "kafka")
	var listenErr error
	var local *devbroker.Local
	c, err := kfake.NewCluster(append(devbroker.Options(dir, kafkaPartitions),
		// kfake always asks for 127.0.0.1:<port>; bind exactly --kafka-addr instead.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			ln, err := devbroker.ListenLocal(network, addr)
			listenErr = err
			local = ln
			return ln, err
		}),
	)...)
	if listenErr != nil {
		return nil, nil, listenError("--kafka-addr", addr, listenErr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("start kafka broker (data %s): %w", dir, err)
	}
	devbroker.PrepareSegments(c, dir, kafkaPartitions)
	return c, local, nil
}
