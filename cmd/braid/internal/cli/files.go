package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, err // it names the path already
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, maxFileBytes)
	}
	return b, nil
}

// definitionFiles expands the -f arguments: a directory stands for the
// .json files directly in it, in name order (as kubectl apply -f DIR); a
// file or "-" stands for itself. A directory without one is an error, so a
// mistyped path never applies nothing quietly.
func definitionFiles(args []string) ([]string, error) {
	var out []string
	for _, arg := range args {
		info, err := os.Stat(arg)
		if arg == "-" || err != nil || !info.IsDir() {
			out = append(out, arg) // readFile says what is wrong with it
			continue
		}
		entries, err := os.ReadDir(arg)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
				found = append(found, filepath.Join(arg, e.Name()))
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: a directory with no .json file", arg)
		}
		out = append(out, found...) // ReadDir sorts by name
	}
	return out, nil
}
