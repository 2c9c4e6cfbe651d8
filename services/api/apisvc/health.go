package apisvc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/gin-gonic/gin"
	"github.com/segmentio/kafka-go"
)

// readyTimeout bounds each readiness check.
const readyTimeout = 2 * time.Second

// readiness is the body of a successful /readyz.
type readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// readyz checks Redis (PING), Kafka (metadata of the api's topics) and the
// events feed (whether opening or reading workflow.events failed in the
// last few seconds); any failure is a 503 problem listing each.
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
	defer cancel()
	checks := map[string]error{
		"redis":  s.rdb.Ping(ctx).Err(),
		"kafka":  s.kafkaReady(ctx),
		"events": s.feed.healthy(),
	}
	select {
	case <-s.closing:
		checks["shutdown"] = errors.New("the api is shutting down")
	default:
	}
	ok := map[string]string{}
	var errs []FieldError
	for _, name := range []string{"redis", "kafka", "events", "shutdown"} {
		err, present := checks[name]
		switch {
		case !present:
		case err != nil:
			errs = append(errs, FieldError{Path: name, Message: err.Error()})
		default:
			ok[name] = "ok"
		}
	}
	if len(errs) > 0 {
		e := errUnavailable(nil, "not ready: %d of the checks failed; see errors", len(errs))
		e.errs = errs
		abort(c, e)
		return
	}
	respond(c, http.StatusOK, readiness{Status: "ok", Checks: ok})
}

// kafkaReady asks the brokers for the metadata of the api's topics.
func (s *Server) kafkaReady(ctx context.Context) error {
	prefix := s.cfg.Bus.TopicPrefix
	names := []string{prefix + eventsv1.TopicWorkflowStart, prefix + eventsv1.TopicWorkflowControl, prefix + eventsv1.TopicWorkflowEvents}
	// The same TLS and SASL as every other connection: without them the api
	// would never be ready against a secured broker.
	tr := &kafka.Transport{ClientID: s.cfg.Bus.ClientID, TLS: s.cfg.Bus.TLS, SASL: s.cfg.Bus.SASL, Dial: s.cfg.Bus.Dial}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(s.cfg.Bus.Brokers...), Timeout: readyTimeout, Transport: tr}
	resp, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: names})
	if err != nil {
		return fmt.Errorf("kafka metadata: %w", err)
	}
	for _, t := range resp.Topics {
		if t.Error != nil {
			return fmt.Errorf("topic %s: %w", t.Name, t.Error)
		}
	}
	if len(resp.Topics) != len(names) {
		return fmt.Errorf("kafka metadata lists %d of %d topics", len(resp.Topics), len(names))
	}
	return nil
}
