package orchsvc

import (
	"context"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/logkey"
)

// offersTTL is how long the reconciler trusts its last read of the handlers
// live workers offer.
const offersTTL = time.Second

// handlerOffers caches the set of handlers live workers offer (the worker
// registry), read for reconcile passes at most once per offersTTL.
type handlerOffers struct {
	mu  sync.Mutex
	at  time.Time
	set map[string]bool
}

// forget drops the cached set: the next read is fresh.
func (o *handlerOffers) forget() {
	o.mu.Lock()
	o.set = nil
	o.mu.Unlock()
}

// offered returns a func telling whether a live worker offers a handler,
// as the worker registry said at most offersTTL ago (a worker whose entry
// is fresh counts: records.WorkerStatus.Live, as the api's waiting reasons
// count it). Nil when the registry cannot be read: the reconciler then
// counts every handler as offered, as it did before pools.
func (s *Service) offered(ctx context.Context) func(string) bool {
	o := &s.offers
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if o.set == nil || now.Sub(o.at) >= offersTTL {
		reg, err := s.keys.RegisteredWorkers(ctx, s.rdb)
		if err != nil {
			s.log.Debug("the reconciler counts every handler as offered", logkey.Err, err)
			return nil
		}
		set := map[string]bool{}
		for _, st := range reg {
			if st.Live(now) {
				for _, h := range st.Handlers {
					set[h] = true
				}
			}
		}
		o.set, o.at = set, now
	}
	set := o.set
	return func(h string) bool { return set[h] }
}
