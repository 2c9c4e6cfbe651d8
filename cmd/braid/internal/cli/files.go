package cli

import (
	"fmt"
	"io"
	"os"
)

// maxFileBytes bounds a definition file read by apply and validate (the
// API's own limit is 1 MiB; reading a little more lets it say so).
const maxFileBytes = 4 << 20

// readFile reads a definition from path ("-" is standard input).
func readFile(path string, stdin io.Reader) ([]byte, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, maxFileBytes)
	}
	return b, nil
}
