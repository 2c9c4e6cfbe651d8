// Package client is a small HTTP client for Braid's REST API (SPEC §8), used
// by the braid CLI. Every request carries the API key in X-API-Key and is
// bounded in time: plain requests by Options.Timeout, streams (server-sent
// events) by a response-header timeout and the caller's context. Error
// responses in application/problem+json are returned as *Problem.
package client
