package envconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// KafkaSecurity is how the services connect to the brokers: TLS
// (BRAID_KAFKA_TLS, BRAID_KAFKA_TLS_CA_FILE) and SASL
// (BRAID_KAFKA_SASL_MECHANISM, _USERNAME, _PASSWORD). The password is never
// printed: String names only the mechanism and user.
type KafkaSecurity struct {
	TLS  *tls.Config    // nil: plaintext
	SASL sasl.Mechanism // nil: no authentication
	user string
}

// String describes the settings without the password.
func (k KafkaSecurity) String() string {
	parts := []string{"tls=off"}
	if k.TLS != nil {
		parts[0] = "tls=on"
	}
	if k.SASL != nil {
		parts = append(parts, "sasl="+k.SASL.Name()+" user="+k.user)
	}
	return strings.Join(parts, " ")
}

// kafkaSecurity reads the Kafka TLS and SASL settings. A CA file turns TLS
// on; SASL without TLS is allowed (a private network) but PLAIN then sends
// the password in the clear, so it requires BRAID_KAFKA_TLS=on.
func (r *Reader) kafkaSecurity() KafkaSecurity {
	var k KafkaSecurity
	caFile := r.String("BRAID_KAFKA_TLS_CA_FILE", "")
	if r.Bool("BRAID_KAFKA_TLS", caFile != "") {
		k.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		if caFile != "" {
			pool, err := loadCA(caFile)
			if err != nil {
				r.errs = append(r.errs, fmt.Errorf("BRAID_KAFKA_TLS_CA_FILE: %w", err))
			}
			k.TLS.RootCAs = pool
		}
	}
	mech := strings.ToLower(r.String("BRAID_KAFKA_SASL_MECHANISM", ""))
	user := r.String("BRAID_KAFKA_SASL_USERNAME", "")
	pass, _ := r.lookup("BRAID_KAFKA_SASL_PASSWORD") // as it is: a password may have spaces
	if mech == "" {
		return k
	}
	k.user = user
	var err error
	switch {
	case user == "" || pass == "":
		err = errors.New("BRAID_KAFKA_SASL_USERNAME and BRAID_KAFKA_SASL_PASSWORD are required with BRAID_KAFKA_SASL_MECHANISM")
	case mech == "plain" && k.TLS == nil:
		err = errors.New("BRAID_KAFKA_SASL_MECHANISM=plain sends the password in the clear: set BRAID_KAFKA_TLS=on")
	case mech == "plain":
		k.SASL = plain.Mechanism{Username: user, Password: pass}
	case mech == "scram-sha-256" || mech == "scram-sha-512":
		algo := scram.SHA256
		if mech == "scram-sha-512" {
			algo = scram.SHA512
		}
		if k.SASL, err = scram.Mechanism(algo, user, pass); err != nil {
			// The library quotes the rejected password in its error.
			err = errors.New("BRAID_KAFKA_SASL_PASSWORD or _USERNAME holds characters SCRAM does not allow (SASLprep)")
		}
	default:
		err = fmt.Errorf("BRAID_KAFKA_SASL_MECHANISM=%q: want plain, scram-sha-256 or scram-sha-512", mech)
	}
	if err != nil {
		r.errs = append(r.errs, err) // never the password
	}
	return k
}

// caFile reads the PEM bundle variable name points at; nil when unset.
func (r *Reader) caFile(name string) *x509.CertPool {
	path := r.String(name, "")
	if path == "" {
		return nil
	}
	pool, err := loadCA(path)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s: %w", name, err))
	}
	return pool
}

// loadCA reads a PEM bundle of CA certificates.
func loadCA(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}
