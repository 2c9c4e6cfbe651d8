package handler

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// httpConfig is the http handler's node config.
type httpConfig struct {
	Method       string          // default GET
	URL          string          // absolute http(s) URL; required unless Mock
	Headers      scalarMap       // request headers
	Query        scalarMap       // added to the URL's query string
	Body         json.RawMessage // object/array/number/bool: JSON; string: sent raw
	ExpectStatus statusSet       // accepted statuses; empty: any 2xx
	Timeout      duration        // optional per-request bound, on top of ctx
	Mock         bool            // no network: echo the request
	MockDelay    duration        // mock only: wait this long first
}

var methodRE = regexp.MustCompile(`^[A-Za-z]{1,20}$`)

func decodeHTTPConfig(raw []byte) (httpConfig, error) {
	o, err := parseObject(raw)
	if err != nil {
		return httpConfig{}, err
	}
	var c httpConfig
	err = o.getAll(field{"method", &c.Method}, field{"url", &c.URL}, field{"headers", &c.Headers},
		field{"query", &c.Query}, field{"expect_status", &c.ExpectStatus}, field{"timeout", &c.Timeout},
		field{"mock", &c.Mock}, field{"mock_delay", &c.MockDelay})
	if err != nil {
		return httpConfig{}, err
	}
	if o.has("body") {
		c.Body = o["body"]
	}
	return c, c.validate()
}

func (c *httpConfig) validate() error {
	c.Method = strings.ToUpper(c.Method)
	if c.Method == "" {
		c.Method = "GET"
	}
	if !methodRE.MatchString(c.Method) {
		return fmt.Errorf("config field %q: invalid method %q", "method", c.Method)
	}
	if c.URL == "" && c.Mock {
		return nil
	}
	if c.URL == "" {
		return fmt.Errorf("config field %q is required", "url")
	}
	if err := checkHTTPURL(c.URL); err != nil {
		return fmt.Errorf("config field %q: %w", "url", err)
	}
	return nil
}

// timeout returns the configured per-request timeout (0: none).
func (c *httpConfig) timeout() time.Duration { return time.Duration(c.Timeout) }

// statusSet is one HTTP status or an array of them.
type statusSet []int

// UnmarshalJSON implements json.Unmarshaler.
func (s *statusSet) UnmarshalJSON(b []byte) error {
	var list []int
	switch jsonKind(b) {
	case "number":
		var one int
		if err := json.Unmarshal(b, &one); err != nil {
			return fmt.Errorf("want integer status, got %s", b)
		}
		list = []int{one}
	case "array":
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("want array of integer statuses: %v", err)
		}
	default:
		return fmt.Errorf("want integer or array of integers, got %s", jsonKind(b))
	}
	for _, code := range list {
		if code < 100 || code > 599 {
			return fmt.Errorf("status %d out of range [100, 599]", code)
		}
	}
	*s = list
	return nil
}

// accepts reports whether status is expected: listed, or any 2xx when empty.
func (s statusSet) accepts(status int) bool {
	if len(s) == 0 {
		return status >= 200 && status < 300
	}
	return slices.Contains(s, status)
}

// String describes the set for error messages.
func (s statusSet) String() string {
	if len(s) == 0 {
		return "2xx"
	}
	return strings.Trim(fmt.Sprint([]int(s)), "[]")
}
