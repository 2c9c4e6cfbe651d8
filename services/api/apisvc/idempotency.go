package apisvc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
)

// idempotencyRetries bounds re-reserving a key that expired between the
// SET NX and the GET of one reservation.
const idempotencyRetries = 3

// reserve claims an Idempotency-Key for run p. fresh is true when p should
// be started; otherwise prior is the run the key already started. A key
// reused with a different input is a 422.
func (s *Server) reserve(ctx context.Context, p statestore.PendingRun, key string) (prior runAccepted, fresh bool, err error) {
	for range idempotencyRetries {
		stored, ours, rerr := s.keys.ReserveIdempotency(ctx, s.rdb, p.Workflow, key, idemValue(p), statestore.IdempotencyTTL)
		if rerr != nil || ours {
			return runAccepted{}, ours, rerr
		}
		id, version, fp, ok := parseIdemValue(stored)
		if !ok {
			continue // expired in between: try again
		}
		if fp != fingerprint(p.Input) {
			return runAccepted{}, false, errInvalid(
				"Idempotency-Key was already used with a different input for workflow "+strconv.Quote(p.Workflow)+
					" (run "+id+"); use a new key for a different request", nil)
		}
		return runAccepted{RunID: id, Workflow: p.Workflow, Version: version}, false, nil
	}
	return runAccepted{}, false, errConflict("Idempotency-Key is changing under concurrent requests; retry")
}

// releaseKey forgets an Idempotency-Key whose run could not be requested.
func (s *Server) releaseKey(ctx context.Context, p statestore.PendingRun, key string) {
	cctx, cancel := cleanupCtx(ctx)
	defer cancel()
	if err := s.keys.ReleaseIdempotency(cctx, s.rdb, p.Workflow, key, idemValue(p)); err != nil {
		s.log.Warn("release idempotency key", logkey.RunID, p.ID, logkey.Err, err)
	}
}

// idemValue is what a reservation stores: run id, version, input fingerprint.
func idemValue(p statestore.PendingRun) string {
	return p.ID + " " + strconv.Itoa(p.Version) + " " + fingerprint(p.Input)
}

func parseIdemValue(v string) (id string, version int, fp string, ok bool) {
	parts := strings.Split(v, " ")
	if len(parts) != 3 {
		return "", 0, "", false
	}
	n, err := strconv.Atoi(parts[1])
	return parts[0], n, parts[2], err == nil
}

// fingerprint identifies an input whatever its key order or spacing.
func fingerprint(input []byte) string {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil {
		if canon, err := json.Marshal(v); err == nil {
			input = canon
		}
	}
	sum := sha256.Sum256(input)
	return hex.EncodeToString(sum[:12])
}
