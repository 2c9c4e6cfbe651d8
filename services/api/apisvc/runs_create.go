package apisvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/logkey"
	"github.com/braidhq/braid/pkg/statestore"
	"github.com/braidhq/braid/pkg/tracing"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// runRequest is the body of POST /workflows/{name}/runs.
type runRequest struct {
	Input json.RawMessage `json:"input"`
}

// runAccepted is the 202 answer to a run request.
type runAccepted struct {
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	Version  int    `json:"version"`
}

// idempotencyKeyShape is what an Idempotency-Key header may hold.
var idempotencyKeyShape = regexp.MustCompile(`^[\x21-\x7e]{1,255}$`)

// createRun starts a run of a workflow's latest version: it checks the
// input, dedupes on Idempotency-Key, records the run as pending, publishes
// RunStartRequested (acknowledged by all replicas) and answers 202 {run_id}.
// With ?wait=D it then waits up to D for the run to end and answers 200
// with the run (as GET /runs/{id}) if it did, else the same 202.
//
// The latest version comes from s.latest when known, and the pending write
// checks it against the live metadata in the same round trip; a request
// that finds it stale, or whose input does not fit the remembered version,
// starts over once from a fresh lookup before it answers.
func (s *Server) createRun(c *gin.Context) {
	name, req, err := runRequestOf(c)
	var wait time.Duration
	if err == nil {
		wait, err = waitQuery(c)
	}
	if err != nil {
		abort(c, err)
		return
	}
	ctx, cancel := s.requestCtx(c)
	defer cancel()
	info, cached := s.latest.get(name)
	for {
		if !cached {
			if info, err = s.liveWorkflow(ctx, name); err != nil {
				abort(c, err)
				return
			}
			s.latest.put(info)
		}
		g, err := s.defs.get(ctx, name, info.Latest)
		if err != nil {
			abort(c, err)
			return
		}
		input, problems := checkInput(g.Def.Inputs, req.Input)
		if len(problems) > 0 && cached {
			cached = false // judge the input by the live latest version only
			continue
		}
		if len(problems) > 0 {
			abort(c, errInvalid(inputDetail(name, info.Latest, problems), problems))
			return
		}
		p := statestore.PendingRun{ID: newRunID(), Workflow: name, Version: info.Latest, Input: input,
			Created: time.Now(), RequestedBy: requester(c), Capped: g.Def.Concurrency > 0}
		if !s.startRun(ctx, c, p, cached, wait) {
			return
		}
		s.latest.drop(name)
		cached = false
	}
}

// runRequestOf reads the workflow name and the optional {input} body.
func runRequestOf(c *gin.Context) (string, runRequest, error) {
	var req runRequest
	name, err := nameParam(c)
	if err != nil {
		return "", req, err
	}
	if k := c.GetHeader("Idempotency-Key"); k != "" && !idempotencyKeyShape.MatchString(k) {
		return "", req, errBadRequest("Idempotency-Key must be 1 to 255 visible ASCII characters")
	}
	body, err := readJSONBody(c)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return name, req, err
	}
	if err := decodeStrict(body, &req); err != nil {
		return "", req, err
	}
	return name, req, nil
}

// startRun applies the idempotency key, then records and publishes p and
// answers (waiting up to wait for the run to end, see answerStarted). With
// checkLatest the record is written only if p.Version is still the
// workflow's live latest version; when it is not, nothing is answered, the
// key is released, and startRun reports true: ask again.
//
// A waiting request registers its waiter before the start is published, so
// the run's end cannot be announced before anyone listens.
func (s *Server) startRun(ctx context.Context, c *gin.Context, p statestore.PendingRun, checkLatest bool, wait time.Duration) (again bool) {
	var w *waiter
	until := time.Now().Add(wait)
	if wait > 0 {
		var ok bool
		if w, ok = s.register(c, p.ID, until); !ok {
			return false
		}
		defer func() {
			if w != nil {
				s.unregister(w)
			}
		}()
	}
	idemKey := c.GetHeader("Idempotency-Key")
	if idemKey != "" {
		prior, fresh, err := s.reserve(ctx, p, idemKey)
		if err != nil {
			abort(c, err)
			return
		}
		if !fresh {
			c.Header("Idempotent-Replayed", "true")
			if w != nil { // wait for the run the key named
				s.unregister(w)
				var ok bool
				if w, ok = s.register(c, prior.RunID, until); !ok {
					return false
				}
			}
			s.answerStarted(c, prior, w, until, false)
			return false
		}
	}
	if err := s.publishStart(ctx, p, checkLatest); err != nil {
		if idemKey != "" {
			s.releaseKey(ctx, p, idemKey)
		}
		if errors.Is(err, statestore.ErrNotLatest) {
			return true
		}
		abort(c, err)
		return false
	}
	s.metrics.runsCreated.Inc()
	traceRun(c, p.ID, p.Workflow)
	s.log.InfoContext(ctx, "run requested", logkey.RunID, p.ID, logkey.Workflow, p.Workflow, logkey.Version, p.Version, logkey.KeyName, p.RequestedBy)
	s.answerStarted(c, runAccepted{RunID: p.ID, Workflow: p.Workflow, Version: p.Version}, w, until, true)
	return false
}

// publishStart writes p's pending record and publishes its start request;
// if publishing fails it deletes the record again and returns a 503. With
// checkLatest the write refuses a p.Version that is no longer the latest
// (the error wraps statestore.ErrNotLatest; nothing is left written).
func (s *Server) publishStart(ctx context.Context, p statestore.PendingRun, checkLatest bool) error {
	var created bool
	var err error
	p.TraceParent = tracing.Traceparent(ctx) // the run's trace: events without a traceparent of their own join it
	if checkLatest {
		created, _, err = s.keys.CreatePendingRunOfLatest(ctx, s.rdb, p)
	} else {
		created, err = s.keys.CreatePendingRun(ctx, s.rdb, p)
	}
	if err != nil {
		return err
	}
	if !created {
		return fmt.Errorf("request run %s: a run with this id already exists", p.ID) // a UUIDv7 collision
	}
	msg, err := eventbus.NewMessage(eventsv1.TopicWorkflowStart, p.ID, p.StartRequest())
	if err == nil {
		tracing.Inject(ctx, &msg.Headers)
		err = s.prod.Publish(ctx, msg)
	}
	if err == nil {
		return nil
	}
	cctx, cancel := cleanupCtx(ctx)
	defer cancel()
	if derr := s.keys.DeletePendingRun(cctx, s.rdb, p.ID, p.Workflow); derr != nil {
		s.log.Warn("undo pending run", logkey.RunID, p.ID, logkey.Err, derr)
	}
	return errUnavailable(err, "could not request run of workflow %q: the event bus did not acknowledge it; retry later", p.Workflow)
}

// newRunID returns a UUIDv7: unique, sortable by creation time, and made
// only of [0-9a-f-].
func newRunID() string { return uuid.Must(uuid.NewV7()).String() }

// inputDetail summarises input problems: how many, and the first.
func inputDetail(name string, version int, problems []FieldError) string {
	if len(problems) == 1 {
		return fmt.Sprintf("the input does not fit workflow %q version %d: %s", name, version, problems[0].Message)
	}
	return fmt.Sprintf("the input does not fit workflow %q version %d: %d problems (see errors), first: %s",
		name, version, len(problems), problems[0].Message)
}
