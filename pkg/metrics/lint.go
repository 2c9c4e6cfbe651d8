package metrics

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/braidhq/braid/pkg/metrics/catalog"
	dto "github.com/prometheus/client_model/go"
)

// Bounds of Lint.
const (
	// MaxSeries is the most series (label sets; a histogram's buckets
	// count once) one family may have.
	MaxSeries = 2000
	// MaxValues is the most distinct values one label of one family may
	// take.
	MaxValues = 200
)

// idLike matches label values that look like identifiers of one run, node,
// worker or request: a UUID, a long hex or digit string (hashes, Unix
// times), a schedule fire's run id (<uuid>.<time>), or anything long.
var idLike = []*regexp.Regexp{
	regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`),
	regexp.MustCompile(`(?i)[0-9a-f]{16,}`),
	regexp.MustCompile(`[0-9]{9,}`),
	regexp.MustCompile(`^.{81,}$`),
}

// Lint checks the families a service gathered for bounded cardinality:
// every braid_ family is in the catalog with exactly its labels (plus
// "service" in `braid dev`), every label name is in catalog.AllowedLabels,
// no label value looks like an id (idLike), and no family has more than
// MaxSeries series or a label more than MaxValues values. Families of the
// Go and process collectors (go_, process_, promhttp_) are not checked.
// It reports every problem found.
func Lint(families []*dto.MetricFamily) error {
	var errs []error
	for _, mf := range families {
		name := mf.GetName()
		if !strings.HasPrefix(name, "braid_") {
			continue
		}
		f, ok := catalog.Lookup(name)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: not in pkg/metrics/catalog", name))
			continue
		}
		errs = append(errs, lintFamily(f, mf)...)
	}
	return errors.Join(errs...)
}

// lintFamily checks the series of one family against its catalog entry.
func lintFamily(f catalog.Family, mf *dto.MetricFamily) []error {
	var errs []error
	if n := len(mf.GetMetric()); n > MaxSeries {
		errs = append(errs, fmt.Errorf("%s: %d series, over %d", f.Name, n, MaxSeries))
	}
	values := map[string]map[string]bool{}
	for _, m := range mf.GetMetric() {
		var names []string
		for _, l := range m.GetLabel() {
			n, v := l.GetName(), l.GetValue()
			if n != "service" {
				names = append(names, n)
			}
			if !slices.Contains(catalog.AllowedLabels, n) {
				errs = append(errs, fmt.Errorf("%s: label %q is not in catalog.AllowedLabels", f.Name, n))
			}
			for _, re := range idLike {
				if re.MatchString(v) {
					errs = append(errs, fmt.Errorf("%s: label %s=%q looks like an id (%s)", f.Name, n, v, re))
					break
				}
			}
			if values[n] == nil {
				values[n] = map[string]bool{}
			}
			values[n][v] = true
		}
		if !sameSet(names, f.Labels) {
			errs = append(errs, fmt.Errorf("%s: labels %v, the catalog says %v", f.Name, names, f.Labels))
		}
	}
	for n, vs := range values {
		if len(vs) > MaxValues {
			errs = append(errs, fmt.Errorf("%s: label %s has %d values, over %d", f.Name, n, len(vs), MaxValues))
		}
	}
	return errs
}

// sameSet reports whether a and b hold the same names.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
