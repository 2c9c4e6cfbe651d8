package handler

import (
	"errors"
	"fmt"
	"strings"
)

// output is the handler output common to every mode.
func (r *shellResult) output() map[string]any {
	return map[string]any{
		"exit_code": r.exitCode,
		"stdout":    r.stdout.out.String(),
		"stderr":    r.stderr.out.String(),
	}
}

// exitError is the retryable error of a non-zero exit.
func (r *shellResult) exitError() error {
	if r.stderr.last == "" {
		return fmt.Errorf("shell: exit code %d", r.exitCode)
	}
	return fmt.Errorf("shell: exit code %d: %s", r.exitCode, r.stderr.last)
}

// parse adds the mode-specific part of a successful run's output:
// "result" (trimmed stdout) for text, "json" for json, "lines" for lines.
func (r *shellResult) parse(out map[string]any, mode string) (any, error) {
	stdout := &r.stdout.out
	switch mode {
	case shellOutputJSON:
		v, err := parseStdoutJSON(stdout)
		if err != nil {
			return out, err
		}
		out["json"] = v
	case shellOutputLines:
		out["lines"] = nonEmptyLines(string(stdout.Bytes()))
	default:
		out["result"] = strings.TrimSpace(stdout.String())
	}
	return out, nil
}

func parseStdoutJSON(stdout *cappedBuffer) (any, error) {
	if stdout.Truncated() {
		return nil, fmt.Errorf("shell: output json: stdout exceeds %d bytes and was truncated", stdout.max)
	}
	if strings.TrimSpace(string(stdout.Bytes())) == "" {
		return nil, errors.New("shell: output json: stdout is empty")
	}
	v, err := decodeAny(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("shell: output json: stdout is not valid JSON: %w", err)
	}
	return v, nil
}

// nonEmptyLines splits s into lines, dropping "\r" endings and blank lines.
// It never returns nil, so the output holds [] rather than null.
func nonEmptyLines(s string) []string {
	lines := []string{}
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
	}
	return lines
}
