package config

import (
	"log/slog"

	"github.com/braidhq/braid/pkg/svcmain"
	"github.com/braidhq/braid/services/api/apisvc"
	"github.com/redis/go-redis/v9"
)

// MainSettings is what svcmain.Main needs before running the api.
func (c Config) MainSettings() svcmain.Settings {
	return svcmain.Settings{LogLevel: c.LogLevel, PprofAddr: c.PprofAddr, HealthAddr: c.Addr}
}

// Service returns the apisvc configuration these settings describe, with
// the clients main opened. An error names a malformed BRAID_API_KEYS
// without echoing a key.
func (c Config) Service(rdb redis.UniversalClient, logger *slog.Logger) (apisvc.Config, error) {
	keys, err := apisvc.ParseKeys(c.APIKeys)
	if err != nil {
		return apisvc.Config{}, err
	}
	return apisvc.Config{
		Addr: c.Addr, APIKeys: keys, AuthOff: c.AuthOff, ShellKeys: c.ShellKeys,
		Bus:    c.Bus(apisvc.ClientID),
		Redis:  rdb,
		Keys:   c.Keys(),
		Logger: logger,

		MaxBodyBytes: c.MaxBody, MaxWaiters: c.MaxWaiters,
		RateLimit: float64(offIfZero(c.RateLimit)), RateBurst: c.RateBurst,
		MaxStreamsPerKey: offIfZero(c.MaxStreamsPerKey), MaxWaitersPerKey: offIfZero(c.MaxWaitersPerKey),
	}, nil
}

// offIfZero maps a limit read from BRAID_*, where 0 turns it off, to
// apisvc.Config's convention, where 0 is the default and NoLimit is off.
func offIfZero(n int) int {
	if n == 0 {
		return apisvc.NoLimit
	}
	return n
}
