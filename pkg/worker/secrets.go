package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/braidhq/braid/pkg/template"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
)

// Secrets is where a worker finds the value of << secret.NAME >>. Values
// never leave the worker: the dispatch carries only names (TaskDispatch
// secret_slots), and whatever an attempt reports — output, error, log lines —
// has every value it was given replaced by Masked.
type Secrets interface {
	// Secret returns NAME's value, or false when this worker has none.
	Secret(name string) (string, bool)
}

// Masked replaces a secret's value in everything an attempt reports.
const Masked = "***"

// SecretMap is a fixed set of secrets (e.g. read from the environment at
// start).
type SecretMap map[string]string

// Secret implements Secrets.
func (m SecretMap) Secret(name string) (string, bool) {
	v, ok := m[name]
	return v, ok
}

// SecretDir reads NAME from the file Dir/NAME at each use (a Kubernetes
// Secret volume, a Docker secret), so a rotated value is picked up. One
// trailing newline is dropped: files written with echo end with one.
type SecretDir string

// validSecretName is the template grammar's identifier: it cannot hold a
// path separator or "..", so a name never leaves the directory.
var validSecretName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// Secret implements Secrets.
func (d SecretDir) Secret(name string) (string, bool) {
	if d == "" || !validSecretName.MatchString(name) {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(string(d), name))
	if err != nil {
		return "", false
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(s, "\r"), true
}

// SecretChain looks a name up in each Secrets in turn.
type SecretChain []Secrets

// Secret implements Secrets.
func (c SecretChain) Secret(name string) (string, bool) {
	for _, s := range c {
		if s == nil {
			continue
		}
		if v, ok := s.Secret(name); ok {
			return v, true
		}
	}
	return "", false
}

// errNoSecrets is a dispatch referencing secrets on a worker without a store.
var errNoSecrets = errors.New("this worker has no secrets configured")

// fillSecrets returns the dispatch's config with its secret slots filled
// from store, and a masker for every value used. A name the store does not
// know is a permanent failure naming it (never a value).
func fillSecrets(d *eventsv1.TaskDispatch, cfg json.RawMessage, store Secrets, worker string) (json.RawMessage, *masker, error) {
	slots := d.GetSecretSlots()
	if len(slots) == 0 {
		return cfg, nil, nil
	}
	if store == nil {
		return nil, nil, fmt.Errorf("task references secrets but %w (worker %s)", errNoSecrets, worker)
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(cfg)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("secrets: decode config: %w", err)
	}
	ts, err := templateSlots(slots)
	if err != nil {
		return nil, nil, err
	}
	var used []string
	v, err = template.Fill(v, ts, func(name string) (string, bool) {
		val, ok := store.Secret(name)
		if ok {
			used = append(used, val)
		}
		return val, ok
	})
	var missing *template.MissingError
	if errors.As(err, &missing) {
		return nil, nil, fmt.Errorf("secret %q is not configured on worker %s", missing.Name, worker)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("secrets: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("secrets: encode config: %w", err)
	}
	return b, newMasker(used), nil
}

// templateSlots converts the wire slots.
func templateSlots(slots []*eventsv1.SecretSlot) ([]template.Slot, error) {
	out := make([]template.Slot, len(slots))
	for i, s := range slots {
		path, err := template.ParsePointer(s.GetPath())
		if err != nil {
			return nil, fmt.Errorf("secrets: %w", err)
		}
		parts := make([]template.Part, len(s.GetParts()))
		for j, p := range s.GetParts() {
			parts[j] = template.Part{Text: p.GetText(), Ref: p.GetSecret()}
		}
		out[i] = template.Slot{Path: path, Parts: parts}
	}
	return out, nil
}

// masker replaces secret values with Masked. A nil masker masks nothing.
type masker struct{ r *strings.Replacer }

// minMaskedLine is the shortest line of a multi-line secret masked on its
// own (a log line never spans lines, so a multi-line value is masked line
// by line too; very short lines would mask common text).
const minMaskedLine = 4

func newMasker(values []string) *masker {
	var raw []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			raw = append(raw, s)
		}
	}
	for _, v := range values {
		add(v)
		if enc, err := json.Marshal(v); err == nil { // as a log line printing JSON shows it
			add(string(enc[1 : len(enc)-1]))
		}
		if strings.Contains(v, "\n") {
			for _, line := range strings.Split(v, "\n") {
				if line = strings.TrimSuffix(line, "\r"); len(line) >= minMaskedLine {
					add(line)
				}
			}
		}
	}
	if len(raw) == 0 {
		return nil
	}
	// Longest first, so a value containing another is masked whole.
	sort.Slice(raw, func(i, j int) bool { return len(raw[i]) > len(raw[j]) })
	pairs := make([]string, 0, 2*len(raw))
	for _, v := range raw {
		pairs = append(pairs, v, Masked)
	}
	return &masker{r: strings.NewReplacer(pairs...)}
}

// str masks s.
func (m *masker) str(s string) string {
	if m == nil {
		return s
	}
	return m.r.Replace(s)
}

// jsonBytes masks encoded JSON value by value: every string and object key
// is masked, and a number whose text holds a secret becomes the string
// Masked, so the result stays valid JSON.
func (m *masker) jsonBytes(b []byte) []byte {
	if m == nil {
		return b
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []byte(strconv.Quote(m.str(string(b)))) // not JSON: never expected; still masked
	}
	out, err := json.Marshal(m.value(v))
	if err != nil {
		return []byte(strconv.Quote(m.str(string(b))))
	}
	return out
}

func (m *masker) value(v any) any {
	switch x := v.(type) {
	case string:
		return m.str(x)
	case json.Number:
		if m.str(string(x)) != string(x) {
			return Masked
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = m.value(e)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[m.str(k)] = m.value(e)
		}
		return out
	}
	return v
}
