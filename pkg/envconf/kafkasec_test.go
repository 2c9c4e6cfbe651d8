package envconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func writeCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return path
}

func TestKafkaSecurity(t *testing.T) {
	t.Parallel()
	ca := writeCA(t)
	r := FromMap(map[string]string{"BRAID_KAFKA_TLS_CA_FILE": ca, "BRAID_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
		"BRAID_KAFKA_SASL_USERNAME": "braid", "BRAID_KAFKA_SASL_PASSWORD": " pass word "})
	c := r.Common()
	require.NoError(t, r.Err())
	require.NotNil(t, c.Kafka.TLS, "a CA file turns TLS on")
	require.NotNil(t, c.Kafka.TLS.RootCAs)
	require.Equal(t, "SCRAM-SHA-512", c.Kafka.SASL.Name())
	require.Equal(t, "tls=on sasl=SCRAM-SHA-512 user=braid", c.Kafka.String())
	bus := c.Bus("x")
	require.Same(t, c.Kafka.TLS, bus.TLS)
	require.NotNil(t, bus.SASL)

	plain := FromMap(map[string]string{}).Common()
	require.Nil(t, plain.Kafka.TLS)
	require.Nil(t, plain.Kafka.SASL)

	on := FromMap(map[string]string{"BRAID_KAFKA_TLS": "on"}).Common()
	require.NotNil(t, on.Kafka.TLS)
	require.Nil(t, on.Kafka.TLS.RootCAs, "system roots")

	for name, env := range map[string]map[string]string{
		"unknown mechanism": {"BRAID_KAFKA_SASL_MECHANISM": "gssapi", "BRAID_KAFKA_SASL_USERNAME": "u", "BRAID_KAFKA_SASL_PASSWORD": "s3cret-pw"},
		"no user":           {"BRAID_KAFKA_SASL_MECHANISM": "scram-sha-256", "BRAID_KAFKA_SASL_PASSWORD": "s3cret-pw"},
		"plain in clear":    {"BRAID_KAFKA_SASL_MECHANISM": "plain", "BRAID_KAFKA_SASL_USERNAME": "u", "BRAID_KAFKA_SASL_PASSWORD": "s3cret-pw"},
		"missing CA":        {"BRAID_KAFKA_TLS_CA_FILE": "/nonexistent/ca.pem"},
		"not a CA":          {"BRAID_KAFKA_TLS_CA_FILE": "/etc/hostname"},
	} {
		r := FromMap(env)
		r.Common()
		err := r.Err()
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "s3cret-pw", "%s: the password was printed", name)
	}
}
