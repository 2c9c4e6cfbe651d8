package apisvc_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/segmentio/kafka-go/sasl/scram"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestReadyOnSecuredBroker: against a broker that speaks only TLS and
// requires SASL, the api starts and /readyz answers 200: its readiness probe
// uses the bus's TLS and SASL like every other connection.
func TestReadyOnSecuredBroker(t *testing.T) {
	t.Parallel()
	ca := testinfra.NewCA(t)
	k := testinfra.StartKafka(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{ca.Server}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "api", "pw-api"))
	mech, err := scram.Mechanism(scram.SHA256, "api", "pw-api")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	api, err := apisvc.New(ctx, apisvc.Config{
		APIKeys: []apisvc.APIKey{{Name: "w", Key: "w-secret-0123456789abcdef", Role: apisvc.RoleWrite}},
		Bus:     eventbus.Config{Brokers: []string{k.Addr}, TLS: &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}, SASL: mech},
		Redis:   testinfra.StartRedis(t).Client(t),
	})
	require.NoError(t, err)
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	defer func() { require.NoError(t, api.Close()) }()
	require.Eventually(t, func() bool {
		resp, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 100*time.Millisecond, "/readyz never answered 200 on a TLS+SASL broker")
}
