package apisvc

import (
	"sync"

	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// subscriber receives one run's events. Its buffer is bounded: when it is
// full the hub drops the subscriber (closing gone) rather than block the
// consumer, and the client reconnects with Last-Event-ID.
type subscriber struct {
	run    string
	events chan *eventsv1.RunEvent
	gone   chan struct{}
	once   sync.Once
}

// drop closes gone once.
func (s *subscriber) drop() { s.once.Do(func() { close(s.gone) }) }

// hub fans run events out to subscribers by run id. Safe for concurrent use.
type hub struct {
	buf  int
	mu   sync.RWMutex
	subs map[string]map[*subscriber]struct{}
}

func newHub(buf int) *hub { return &hub{buf: buf, subs: map[string]map[*subscriber]struct{}{}} }

// subscribe registers a subscriber for run's events.
func (h *hub) subscribe(run string) *subscriber {
	s := &subscriber{run: run, events: make(chan *eventsv1.RunEvent, h.buf), gone: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[run] == nil {
		h.subs[run] = map[*subscriber]struct{}{}
	}
	h.subs[run][s] = struct{}{}
	return s
}

// unsubscribe removes s; safe after the hub dropped it.
func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.remove(s)
}

// remove deletes s from the index; h.mu must be held.
func (h *hub) remove(s *subscriber) {
	if m := h.subs[s.run]; m != nil {
		delete(m, s)
		if len(m) == 0 {
			delete(h.subs, s.run)
		}
	}
}

// wants reports whether anyone listens to run (checked before decoding).
func (h *hub) wants(run string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.subs[run]) > 0
}

// publish hands ev to every subscriber of its run without blocking; a
// subscriber whose buffer is full is dropped.
func (h *hub) publish(ev *eventsv1.RunEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[ev.RunId] {
		select {
		case s.events <- ev:
		default:
			h.remove(s)
			s.drop()
		}
	}
}

// count returns the number of subscribers.
func (h *hub) count() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	for _, m := range h.subs {
		n += len(m)
	}
	return n
}
