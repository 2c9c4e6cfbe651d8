package envconf

import (
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/stretchr/testify/require"
)

func TestKafkaSecurity(t *testing.T) {
	t.Parallel()
	ca := testinfra.NewCA(t).CAFile
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

	redisCA := FromMap(map[string]string{"BRAID_REDIS_TLS_CA_FILE": ca}).Common()
	require.NotNil(t, redisCA.RedisCAs)

	plain := FromMap(map[string]string{}).Common()
	require.Nil(t, plain.RedisCAs)
	require.Nil(t, plain.Kafka.TLS)
	require.Nil(t, plain.Kafka.SASL)

	on := FromMap(map[string]string{"BRAID_KAFKA_TLS": "on"}).Common()
	require.NotNil(t, on.Kafka.TLS)
	require.Nil(t, on.Kafka.TLS.RootCAs, "system roots")

	for name, env := range map[string]map[string]string{
		"unknown mechanism":      {"BRAID_KAFKA_SASL_MECHANISM": "gssapi", "BRAID_KAFKA_SASL_USERNAME": "u", "BRAID_KAFKA_SASL_PASSWORD": "s3cret-pw"},
		"no user":                {"BRAID_KAFKA_SASL_MECHANISM": "scram-sha-256", "BRAID_KAFKA_SASL_PASSWORD": "s3cret-pw"},
		"plain in clear":         {"BRAID_KAFKA_SASL_MECHANISM": "plain", "BRAID_KAFKA_SASL_USERNAME": "u", "BRAID_KAFKA_SASL_PASSWORD": "s3cret-pw"},
		"missing CA":             {"BRAID_KAFKA_TLS_CA_FILE": "/nonexistent/ca.pem"},
		"not a CA":               {"BRAID_KAFKA_TLS_CA_FILE": "/etc/hostname"},
		"SCRAM-invalid password": {"BRAID_KAFKA_SASL_MECHANISM": "scram-sha-256", "BRAID_KAFKA_SASL_USERNAME": "u", "BRAID_KAFKA_SASL_PASSWORD": "s3cret-pw\u0007"},
		"missing Redis CA":       {"BRAID_REDIS_TLS_CA_FILE": "/nonexistent/redis-ca.pem"},
	} {
		r := FromMap(env)
		r.Common()
		err := r.Err()
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "s3cret-pw", "%s: the password was printed", name)
	}
}
