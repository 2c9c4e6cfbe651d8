module github.com/braidhq/braid/services/orchestrator

go 1.26.0

require (
	github.com/braidhq/braid/pkg v0.0.0
	github.com/braidhq/braid/proto-events v0.0.0
)

replace (
	github.com/braidhq/braid/pkg => ../../pkg
	github.com/braidhq/braid/proto-events => ../../proto-events
)
