package statestore

import (
	"crypto/x509"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestClusterURLs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url     string
		cluster bool
		addrs   []string
		tls     bool
		err     string
	}{
		{url: "redis://:pw@127.0.0.1:6379/0"},
		{url: "rediss://u:pw@redis.example:6380/2"},
		{url: "redis://:pw@10.0.0.1:7000,10.0.0.2:7001,10.0.0.3:7002", cluster: true,
			addrs: []string{"10.0.0.1:7000", "10.0.0.2:7001", "10.0.0.3:7002"}},
		{url: "redis-cluster://:pw@10.0.0.1:7000", cluster: true, addrs: []string{"10.0.0.1:7000"}},
		{url: "redis-cluster://user:p%40ss@h1:7000,h2:7000/0?dial_timeout=2s", cluster: true, addrs: []string{"h1:7000", "h2:7000"}},
		{url: "rediss-cluster://:pw@h1:7000,h2:7000", cluster: true, addrs: []string{"h1:7000", "h2:7000"}, tls: true},
		{url: "redis://:pw@h1:7000,h2:7000/3", cluster: true, err: "database 0 only"},
		{url: "redis-cluster://:secret@h1:notaport", cluster: true, err: "not a valid"},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			require.Equal(t, c.cluster, IsClusterURL(c.url))
			rdb, _, err := newUniversal(c.url, nil)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				require.NotContains(t, err.Error(), "secret", "the password is never shown")
				return
			}
			require.NoError(t, err)
			defer rdb.Close()
			cc, ok := rdb.(*redis.ClusterClient)
			require.Equal(t, c.cluster, ok)
			if !ok {
				return
			}
			opt := cc.Options()
			require.Equal(t, c.addrs, opt.Addrs)
			require.True(t, opt.ContextTimeoutEnabled)
			require.Equal(t, ClusterStateReload, opt.ClusterStateReloadInterval, "a failover is followed within a second")
			require.Equal(t, c.tls, opt.TLSConfig != nil)
			require.NotEmpty(t, opt.Password)
		})
	}
}

func TestClusterURLRefusesAnUnusedCA(t *testing.T) {
	t.Parallel()
	_, _, err := newUniversal("redis-cluster://:pw@h1:7000", x509.NewCertPool())
	require.ErrorContains(t, err, "not rediss://")
	rdb, _, err := newUniversal("rediss-cluster://:pw@h1:7000", x509.NewCertPool())
	require.NoError(t, err)
	require.NotNil(t, rdb.(*redis.ClusterClient).Options().TLSConfig.RootCAs)
	require.NoError(t, rdb.Close())
}

func TestAddrs(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"127.0.0.1:6379"}, Addrs("redis://:pw@127.0.0.1/0"))
	require.Equal(t, []string{"h1:7000", "h2:7001"}, Addrs("redis://:pw@h1:7000,h2:7001"))
	require.Equal(t, []string{"h1:7000"}, Addrs("rediss-cluster://:pw@h1:7000"))
	require.Nil(t, Addrs("unix:///run/redis.sock"))
	require.Nil(t, Addrs("http://h1"))
}
