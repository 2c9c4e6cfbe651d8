package apisvc

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// Client names, the budgets that limits are charged to: "key:NAME" for a
// request with a valid API key, "addr:ADDR" for one without (authentication
// off, or a missing or wrong key).
const (
	clientKeyPrefix  = "key:"
	clientAddrPrefix = "addr:"
)

// clientOf names the client a request is charged to. Keys are named by
// their configured name, so one key used from many machines shares one
// budget. Requests without a key are named by their TCP peer, never by
// X-Forwarded-For, which any client can forge to get a fresh budget.
func (s *Server) clientOf(c *gin.Context) string {
	if p, ok := c.Get(ctxPrincipal); ok && !s.cfg.AuthOff {
		return clientKeyPrefix + p.(principal).Name
	}
	return peerClient(c)
}

// peerClient names a request's TCP peer. An IPv6 peer is named by its /64,
// the block one host usually holds, so that walking through its addresses
// does not yield a fresh budget each time.
func peerClient(c *gin.Context) string {
	host, _, err := net.SplitHostPort(c.Request.RemoteAddr)
	if err != nil {
		host = c.Request.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return clientAddrPrefix + host
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.WithZone("").Prefix(64)
		return clientAddrPrefix + p.String()
	}
	return clientAddrPrefix + a.String()
}

// describeClient phrases a client name for a problem's detail.
func describeClient(client string) string {
	if name, ok := strings.CutPrefix(client, clientKeyPrefix); ok {
		return fmt.Sprintf("API key %q", name)
	}
	return "client address " + strings.TrimPrefix(client, clientAddrPrefix)
}

// slots counts what each client holds at once (open streams, waiting
// requests) and refuses a client more than max. Safe for concurrent use; a
// nil *slots (no limit) admits everything.
type slots struct {
	max  int
	mu   sync.Mutex
	held map[string]int
}

// newSlots returns slots of max per client, or nil when max is NoLimit.
func newSlots(max int) *slots {
	if max == NoLimit {
		return nil
	}
	return &slots{max: max, held: map[string]int{}}
}

// acquire takes one of client's slots; false when it holds max already.
func (s *slots) acquire(client string) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[client] >= s.max {
		return false
	}
	s.held[client]++
	return true
}

// release gives back a slot taken by acquire.
func (s *slots) release(client string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[client] <= 1 {
		delete(s.held, client) // the map holds only clients holding slots
		return
	}
	s.held[client]--
}
