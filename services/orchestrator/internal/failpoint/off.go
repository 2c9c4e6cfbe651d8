//go:build !failpoints

package failpoint

import "log/slog"

// Enabled is false: this binary was built without the failpoints tag.
const Enabled = false

// HoldWrite never holds in a build without the failpoints tag.
func HoldWrite(*slog.Logger, string) bool { return false }

// ExitAfterWrite never exits in a build without the failpoints tag.
func ExitAfterWrite(*slog.Logger, string, string) {}
