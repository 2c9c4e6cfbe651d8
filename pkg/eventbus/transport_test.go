package eventbus_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
)

// roundTrip creates a topic, publishes one record and reads it back in a
// consumer group: every kind of connection the bus makes (admin, producer,
// group consumer) goes through cfg's TLS and SASL.
func roundTrip(t *testing.T, cfg eventbus.Config) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	topic := testinfra.UniqueName(t, "tls")
	if err := eventbus.EnsureTopics(ctx, cfg, topic); err != nil {
		return err
	}
	prod, err := eventbus.NewProducer(cfg)
	if err != nil {
		return err
	}
	defer prod.Close()
	if err := prod.Publish(ctx, eventbus.Message{Topic: topic, Key: []byte("k"), Value: []byte("over tls")}); err != nil {
		return err
	}
	cons, err := eventbus.NewConsumer(t.Context(), cfg, testinfra.UniqueName(t, "g"), topic)
	if err != nil {
		return err
	}
	defer cons.Close()
	msgs, err := cons.Fetch(ctx, 1)
	if err != nil {
		return err
	}
	require.Len(t, msgs, 1)
	require.Equal(t, "over tls", string(msgs[0].Value))
	return cons.Commit(ctx, msgs...)
}

// TestTLSAndSASL runs the bus against a broker that only speaks TLS and
// requires SASL (SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN users): with the
// test CA and a right password everything works; a wrong password, an
// untrusted CA or plaintext fails.
func TestTLSAndSASL(t *testing.T) {
	t.Parallel()
	ca := testinfra.NewCA(t)
	k := testinfra.StartKafka(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{ca.Server}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "braid256", "pw-256"),
		kfake.Superuser("SCRAM-SHA-512", "braid512", "pw-512"), kfake.Superuser("PLAIN", "plainuser", "pw-plain"))
	base := eventbus.Config{Brokers: []string{k.Addr}, AdminTimeout: 5 * time.Second}
	trusted := &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}
	mech := func(kind, user, pass string) sasl.Mechanism {
		t.Helper()
		if kind == "PLAIN" {
			return plain.Mechanism{Username: user, Password: pass}
		}
		algo := scram.SHA256
		if kind == "SCRAM-SHA-512" {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, user, pass)
		require.NoError(t, err)
		return m
	}
	for _, ok := range []struct{ kind, user, pass string }{
		{"SCRAM-SHA-256", "braid256", "pw-256"}, {"SCRAM-SHA-512", "braid512", "pw-512"}, {"PLAIN", "plainuser", "pw-plain"},
	} {
		cfg := base
		cfg.TLS, cfg.SASL = trusted, mech(ok.kind, ok.user, ok.pass)
		require.NoError(t, roundTrip(t, cfg), ok.kind)
	}

	wrongPass := base
	wrongPass.TLS, wrongPass.SASL = trusted, mech("SCRAM-SHA-256", "braid256", "not-the-password")
	untrusted := base
	untrusted.TLS, untrusted.SASL = &tls.Config{MinVersion: tls.VersionTLS12}, mech("SCRAM-SHA-256", "braid256", "pw-256")
	plaintext := base
	plaintext.SASL = mech("SCRAM-SHA-256", "braid256", "pw-256")
	noSASL := base
	noSASL.TLS = trusted
	for name, cfg := range map[string]eventbus.Config{"wrong password": wrongPass, "untrusted CA": untrusted, "plaintext": plaintext, "no SASL": noSASL} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := eventbus.EnsureTopics(ctx, cfg, testinfra.UniqueName(t, "refused"))
		cancel()
		require.Error(t, err, name)
	}
}
