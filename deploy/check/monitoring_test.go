package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/braidhq/braid/pkg/metrics/catalog"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// metricName finds the Braid metric names a PromQL expression uses.
var metricName = regexp.MustCompile(`\bbraid_[a-z0-9_]+`)

// requireCatalogued fails for every metric name in exprs that no Braid
// service registers (pkg/metrics/catalog), and returns the families used.
func requireCatalogued(t *testing.T, where string, exprs []string) []string {
	t.Helper()
	var used []string
	for _, e := range exprs {
		names := metricName.FindAllString(e, -1)
		require.NotEmpty(t, names, "%s: %q uses no braid_ metric", where, e)
		for _, n := range names {
			f, ok := catalog.Lookup(n)
			require.True(t, ok, "%s: %s is not a metric any Braid service registers (pkg/metrics/catalog): %q", where, n, e)
			if !slices.Contains(used, f.Name) {
				used = append(used, f.Name)
			}
		}
	}
	return used
}

// TestAlertRulesNameRegisteredMetrics: deploy/prometheus/alerts.yml parses
// as a Prometheus rule file, has the four alerts the issue asks for, and
// every metric its expressions use is registered by a service.
func TestAlertRulesNameRegisteredMetrics(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, "deploy/prometheus/alerts.yml"))
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	require.NoError(t, yaml.UnmarshalStrict(b, &rules))
	var alerts, exprs []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Alert, "group %s: a rule without a name", g.Name)
			require.NotEmpty(t, r.Labels["severity"], r.Alert)
			require.NotEmpty(t, r.Annotations["summary"], r.Alert)
			alerts, exprs = append(alerts, r.Alert), append(exprs, r.Expr)
		}
	}
	require.ElementsMatch(t, []string{"BraidConsumerLagGrowing", "BraidDeadLetters", "BraidNoSchedulerLeader", "BraidWorkersGone"}, alerts)
	used := requireCatalogued(t, "alerts.yml", exprs)
	for _, f := range []catalog.Family{catalog.ConsumerLag, catalog.DLQRecords, catalog.Leader, catalog.LiveWorkers} {
		require.Contains(t, used, f.Name)
	}

	prom, err := os.ReadFile(filepath.Join(root, "deploy/prometheus/prometheus.yml"))
	require.NoError(t, err)
	var cfg struct {
		RuleFiles     []string `json:"rule_files"`
		ScrapeConfigs []struct {
			JobName string `json:"job_name"`
		} `json:"scrape_configs"`
	}
	require.NoError(t, yaml.Unmarshal(prom, &cfg))
	require.Contains(t, cfg.RuleFiles, "/etc/prometheus/alerts.yml", "the compose Prometheus loads the rules")
	var jobs []string
	for _, s := range cfg.ScrapeConfigs {
		jobs = append(jobs, s.JobName)
	}
	require.ElementsMatch(t, []string{"braid-api", "braid-orchestrator", "braid-worker"}, jobs, "every service is scraped")
}

// TestDashboardNamesRegisteredMetrics: deploy/grafana/braid.json is a
// Grafana dashboard whose panels query only registered metrics, and that
// shows every metric the issue lists.
func TestDashboardNamesRegisteredMetrics(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, "deploy/grafana/braid.json"))
	require.NoError(t, err)
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &dash))
	require.NotEmpty(t, dash.UID)
	var exprs []string
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	used := requireCatalogued(t, "braid.json", exprs)
	for _, f := range []catalog.Family{catalog.RunsStarted, catalog.RunsEnded, catalog.NodeAttempts, catalog.TaskQueueWait,
		catalog.TaskDuration, catalog.ConsumerLag, catalog.RedisCommandDuration, catalog.RedisScriptDuration, catalog.DLQRecords,
		catalog.SchedulerFires, catalog.SchedulerMisses, catalog.Leader, catalog.LiveWorkers, catalog.StaleWrites,
		catalog.LockTakeovers, catalog.SSEClients, catalog.APIWaiting} {
		require.Contains(t, used, f.Name, "the dashboard shows %s", f.Name)
	}
}
