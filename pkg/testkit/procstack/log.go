package procstack

import "os"

// Log returns everything the process wrote so far, over all its starts
// (or the error reading the log, as text).
func (p *Proc) Log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// Tail returns at most the last n bytes of the log, marked "...\n" when
// cut.
func (p *Proc) Tail(n int) string {
	s := p.Log()
	if len(s) > n {
		s = "...\n" + s[len(s)-n:]
	}
	return s
}
