package eventbus

// Header is one record header.
type Header struct {
	Key   string
	Value []byte
}

// Headers are a record's headers, in order. A repeated key counts as one
// header whose value is its last: Get reads it and Set replaces it. The
// values of fetched records and of NewMessage's headers may be shared with
// other messages: replace a value (Set), never modify it in place.
//
// A slice rather than a map: every record has two or three headers, and a
// map per record on both sides of Kafka, with a copy of each value, cost
// several per cent of the CPU of a fan-out of noop tasks (DESIGN.md, Round
// two 37). *Headers is an OpenTelemetry TextMapCarrier
// (pkg/tracing injects and extracts trace context with it).
type Headers []Header

// value returns key's last value, if any, without copying it.
func (h Headers) value(key string) ([]byte, bool) {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Key == key {
			return h[i].Value, true
		}
	}
	return nil, false
}

// Lookup returns key's value and whether the headers have key.
func (h Headers) Lookup(key string) (string, bool) {
	v, ok := h.value(key)
	return string(v), ok
}

// Get returns key's value, "" when absent.
func (h Headers) Get(key string) string {
	v, _ := h.value(key)
	return string(v)
}

// Set gives key the value value: it replaces key's last value, or adds key.
func (h *Headers) Set(key, value string) {
	for i := len(*h) - 1; i >= 0; i-- {
		if (*h)[i].Key == key {
			(*h)[i].Value = []byte(value)
			return
		}
	}
	*h = append(*h, Header{Key: key, Value: []byte(value)})
}

// Keys lists the keys, each once, in order of first appearance.
func (h Headers) Keys() []string {
	out := make([]string, 0, len(h))
	for i, x := range h {
		if _, seen := h[:i].value(x.Key); !seen {
			out = append(out, x.Key)
		}
	}
	return out
}

// Map returns the headers as a map (the last value of a repeated key).
func (h Headers) Map() map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for _, x := range h {
		out[x.Key] = string(x.Value)
	}
	return out
}

// Clone returns a copy of h that Set can change without changing h (the
// values are shared: they are never modified in place).
func (h Headers) Clone() Headers {
	if h == nil {
		return nil
	}
	return append(make(Headers, 0, len(h)+1), h...)
}
