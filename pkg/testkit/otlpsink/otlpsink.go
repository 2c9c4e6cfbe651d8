// Package otlpsink is an OTLP/HTTP trace receiver for tests: services
// started with OTEL_EXPORTER_OTLP_ENDPOINT=<Sink.URL> export their spans to
// it, and the test reads them back as plain values. It speaks the real
// protocol (POST /v1/traces, protobuf, gzip or not), so what it receives is
// what a collector would.
package otlpsink

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	collectorv1 "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span.
type Span struct {
	Service  string // the resource's service.name
	Scope    string // the instrumentation scope (the tracer's name)
	Name     string
	Kind     tracev1.Span_SpanKind
	TraceID  string // hex
	SpanID   string // hex
	ParentID string // hex; "" for a root span
	Links    []string
	Start    time.Time
	End      time.Time
	Attrs    map[string]string // every attribute, its value as text
	Failed   bool              // status code ERROR
	Message  string            // status message
}

// Sink receives spans until it is closed.
type Sink struct {
	URL string // http://127.0.0.1:port

	keep  bool
	srv   *http.Server
	mu    sync.Mutex
	spans []Span
	count int
}

// maxBody bounds one export request.
const maxBody = 64 << 20

// Start serves a sink keeping every span on a free loopback port, closed
// when t ends.
func Start(t testing.TB) *Sink {
	t.Helper()
	s, err := New(true)
	if err != nil {
		t.Fatalf("otlpsink: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// New serves a sink on a free loopback port; with keep false it only
// counts the spans (Count), as a benchmark's collector does.
func New(keep bool) (*Sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &Sink{URL: "http://" + ln.Addr().String(), keep: keep}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", s.receive)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops serving.
func (s *Sink) Close() error { return s.srv.Close() }

// Count is how many spans arrived.
func (s *Sink) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

func (s *Sink) receive(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, maxBody)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = io.LimitReader(zr, maxBody)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collectorv1.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	got := flatten(&req)
	s.mu.Lock()
	s.count += len(got)
	if s.keep {
		s.spans = append(s.spans, got...)
	}
	s.mu.Unlock()
	out, _ := proto.Marshal(&collectorv1.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func flatten(req *collectorv1.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range req.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				v := Span{
					Service: service, Scope: ss.GetScope().GetName(), Name: sp.GetName(), Kind: sp.GetKind(),
					TraceID: hex.EncodeToString(sp.GetTraceId()), SpanID: hex.EncodeToString(sp.GetSpanId()),
					Start: time.Unix(0, int64(sp.GetStartTimeUnixNano())), End: time.Unix(0, int64(sp.GetEndTimeUnixNano())),
					Attrs:  attrs(sp.GetAttributes()),
					Failed: sp.GetStatus().GetCode() == tracev1.Status_STATUS_CODE_ERROR, Message: sp.GetStatus().GetMessage(),
				}
				if p := sp.GetParentSpanId(); len(p) > 0 {
					v.ParentID = hex.EncodeToString(p)
				}
				for _, l := range sp.GetLinks() {
					v.Links = append(v.Links, hex.EncodeToString(l.GetSpanId()))
				}
				out = append(out, v)
			}
		}
	}
	return out
}

func attrs(kvs []*commonv1.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonv1.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonv1.AnyValue_IntValue:
			m[kv.GetKey()] = fmt.Sprint(x.IntValue)
		case *commonv1.AnyValue_BoolValue:
			m[kv.GetKey()] = fmt.Sprint(x.BoolValue)
		case *commonv1.AnyValue_DoubleValue:
			m[kv.GetKey()] = fmt.Sprint(x.DoubleValue)
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}

// Spans returns every span received so far, in start order.
func (s *Sink) Spans() []Span {
	s.mu.Lock()
	out := append([]Span(nil), s.spans...)
	s.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// Trace returns the spans of one trace, in start order.
func (s *Sink) Trace(traceID string) []Span {
	var out []Span
	for _, sp := range s.Spans() {
		if sp.TraceID == traceID {
			out = append(out, sp)
		}
	}
	return out
}

// Wait polls until ok holds for the spans received (true), or timeout
// passes (false).
func (s *Sink) Wait(timeout time.Duration, ok func([]Span) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if ok(s.Spans()) {
			return true
		}
		select {
		case <-deadline.C:
			return ok(s.Spans())
		case <-tick.C:
		}
	}
}
