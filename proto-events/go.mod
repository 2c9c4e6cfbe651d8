module github.com/braidhq/braid/proto-events

go 1.26.0

require (
	github.com/planetscale/vtprotobuf v0.6.0
	google.golang.org/protobuf v1.36.12
)
