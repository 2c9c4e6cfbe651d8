package devstack

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the name, under the data dir, of the file holding the key
// braid dev generated. The CLI reads it when BRAID_API_KEY is unset.
const KeyFile = "api-key"

// devKeyName is the name of the generated key in BRAID_API_KEYS syntax.
const devKeyName = "dev"

// keyBytes is the entropy of a generated key.
const keyBytes = 24

// KeyPath returns the path of the generated key's file under dataDir.
func KeyPath(dataDir string) string { return filepath.Join(dataDir, KeyFile) }

// ReadKey returns the key stored under dataDir, or "" with no error when
// there is none.
func ReadKey(dataDir string) (string, error) {
	b, err := os.ReadFile(KeyPath(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read api key: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// loadOrCreateKey returns the key stored under dataDir, generating and
// storing one (mode 0600) the first time. created reports a new key.
func loadOrCreateKey(dataDir string) (key string, created bool, err error) {
	if key, err = ReadKey(dataDir); err != nil || key != "" {
		return key, false, err
	}
	buf := make([]byte, keyBytes)
	if _, err := rand.Read(buf); err != nil {
		return "", false, fmt.Errorf("generate api key: %w", err)
	}
	key = "braid_" + hex.EncodeToString(buf)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", false, fmt.Errorf("create data dir %s: %w", dataDir, err)
	}
	if err := os.WriteFile(KeyPath(dataDir), []byte(key+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("store api key: %w", err)
	}
	return key, true, nil
}

// devKeys returns the BRAID_API_KEYS value for the generated key.
func devKeys(key string) string { return devKeyName + ":" + key + ":write" }

// RedisPasswordFile is the name, under the data dir, of the file holding
// the Redis password braid dev generated.
const RedisPasswordFile = "redis-password"

// loadOrCreateRedisPassword returns the Redis password stored under
// dataDir, generating and storing one (mode 0600) the first time: the same
// on every restart, so a client configured from an earlier banner keeps
// working. A data dir from before passwords gets one on its next start.
func loadOrCreateRedisPassword(dataDir string) (string, error) {
	path := filepath.Join(dataDir, RedisPasswordFile)
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read redis password: %w", err)
	}
	buf := make([]byte, keyBytes)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("generate redis password: %w", err)
	}
	pw := hex.EncodeToString(buf)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("create data dir %s: %w", dataDir, err)
	}
	if err := os.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("store redis password: %w", err)
	}
	return pw, nil
}
