//go:build !failpoints

package failpoint

import "log/slog"

// Enabled is false: this binary was built without the failpoints tag.
const Enabled = false

// ExitAfterResult never exits in a build without the failpoints tag.
func ExitAfterResult(*slog.Logger, string, string) {}
