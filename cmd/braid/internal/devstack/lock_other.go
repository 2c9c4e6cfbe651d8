//go:build !unix

package devstack

import (
	"fmt"
	"os"
)

// lockDataDir creates dataDir; advisory locking is only done on Unix.
func lockDataDir(dataDir string) (func(), error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir %s: %w", dataDir, err)
	}
	return func() {}, nil
}
