package apisvc

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/braidhq/braid/pkg/logkey"
)

// Role is what an API key may do.
type Role string

// Roles: read keys may only GET (and validate a definition); write keys may do everything.
const (
	RoleRead  Role = "read"
	RoleWrite Role = "write"
)

// APIKey is one accepted key. Its String and LogValue never show Key.
type APIKey struct {
	Name string // shown in logs and recorded as a run's requested_by
	Key  string // the secret
	Role Role
}

// String names the key without its secret.
func (k APIKey) String() string { return fmt.Sprintf("api key %q (%s)", k.Name, k.Role) }

// LogValue keeps the secret out of structured logs.
func (k APIKey) LogValue() slog.Value {
	return slog.GroupValue(slog.String(logkey.Name, k.Name), slog.String(logkey.Role, string(k.Role)))
}

// keyName is what a key's name may hold.
var keyName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ParseKeys parses BRAID_API_KEYS: comma-separated "name:key:role" entries,
// roles read or write. The key is everything between the first and the last
// colon, so it may itself hold colons. Errors name entries by position and
// name, never by key.
func ParseKeys(spec string) ([]APIKey, error) {
	var keys []APIKey
	var errs []error
	for i, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		k, err := parseKey(entry)
		if err != nil {
			errs = append(errs, fmt.Errorf("BRAID_API_KEYS entry %d: %w", i+1, err))
			continue
		}
		keys = append(keys, k)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if _, err := newKeyring(keys); err != nil {
		return nil, err
	}
	return keys, nil
}

// parseKey parses one name:key:role entry.
func parseKey(entry string) (APIKey, error) {
	first, last := strings.IndexByte(entry, ':'), strings.LastIndexByte(entry, ':')
	if first < 0 || first == last {
		return APIKey{}, errors.New(`want name:key:role`)
	}
	k := APIKey{Name: entry[:first], Key: entry[first+1 : last], Role: Role(entry[last+1:])}
	return k, k.check()
}

// check validates a key without mentioning its secret.
func (k APIKey) check() error {
	switch {
	case !keyName.MatchString(k.Name):
		return fmt.Errorf("key name %q must match [A-Za-z0-9_.-]{1,64}", k.Name)
	case k.Key == "":
		return fmt.Errorf("key %q is empty", k.Name)
	case k.Role != RoleRead && k.Role != RoleWrite:
		return fmt.Errorf("key %q has role %q; want read or write", k.Name, k.Role)
	}
	return nil
}

// keyring holds SHA-256 digests of the configured keys, never the keys.
type keyring struct {
	sums  [][sha256.Size]byte
	names []string
	roles []Role
}

// newKeyring hashes keys; names must be unique.
func newKeyring(keys []APIKey) (*keyring, error) {
	r := &keyring{}
	seen := map[string]bool{}
	for _, k := range keys {
		if err := k.check(); err != nil {
			return nil, err
		}
		if seen[k.Name] {
			return nil, fmt.Errorf("key name %q is used twice", k.Name)
		}
		seen[k.Name] = true
		r.sums = append(r.sums, sha256.Sum256([]byte(k.Key)))
		r.names, r.roles = append(r.names, k.Name), append(r.roles, k.Role)
	}
	return r, nil
}

// match returns the index of the key equal to presented, or -1. It hashes
// presented and compares the digest with every configured digest in constant
// time, without stopping at a match, so timing tells nothing about which key
// (or how much of one) matched.
func (r *keyring) match(presented string) int {
	sum := sha256.Sum256([]byte(presented))
	found := -1
	for i := range r.sums {
		eq := subtle.ConstantTimeCompare(sum[:], r.sums[i][:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	return found
}
