package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

var anchor = at("2026-03-01T10:00:00Z")

func TestParse(t *testing.T) {
	t.Parallel()
	paris, err := Zone("Europe/Paris")
	require.NoError(t, err)
	tests := []struct {
		name    string
		expr    string
		loc     *time.Location
		after   time.Time
		want    []time.Time // successive fire times after `after`
		wantErr string
	}{
		{name: "five fields", expr: "*/15 * * * *", loc: time.UTC, after: anchor.Add(time.Minute),
			want: []time.Time{at("2026-03-01T10:15:00Z"), at("2026-03-01T10:30:00Z")}},
		{name: "descriptor", expr: "@daily", loc: time.UTC, after: anchor,
			want: []time.Time{at("2026-03-02T00:00:00Z"), at("2026-03-03T00:00:00Z")}},
		{name: "hourly", expr: "@hourly", loc: time.UTC, after: anchor, want: []time.Time{at("2026-03-01T11:00:00Z")}},
		{name: "every anchored", expr: "@every 2s", loc: time.UTC, after: anchor.Add(3 * time.Second),
			want: []time.Time{anchor.Add(4 * time.Second), anchor.Add(6 * time.Second)}},
		{name: "every before anchor", expr: "@every 1m", loc: time.UTC, after: anchor.Add(-time.Hour),
			want: []time.Time{anchor.Add(time.Minute)}},
		{name: "time zone", expr: "0 9 * * *", loc: paris, after: anchor,
			want: []time.Time{at("2026-03-02T08:00:00Z")}}, // 09:00 CET = 08:00 UTC
		{name: "time zone across DST", expr: "0 9 * * *", loc: paris, after: at("2026-03-28T12:00:00Z"),
			want: []time.Time{at("2026-03-29T07:00:00Z")}}, // 09:00 CEST = 07:00 UTC
		{name: "empty", expr: " ", wantErr: "empty"},
		{name: "six fields", expr: "0 * * * * *", wantErr: "want 5 fields"},
		{name: "garbage", expr: "every day", wantErr: "is invalid"},
		{name: "out of range", expr: "61 * * * *", wantErr: "is invalid"},
		{name: "never", expr: "0 0 30 2 *", loc: time.UTC, wantErr: "never fires"},
		{name: "tz prefix", expr: "TZ=UTC 0 * * * *", wantErr: "timezone field"},
		{name: "every no duration", expr: "@every", wantErr: "want a duration"},
		{name: "every bad", expr: "@every soon", wantErr: "want a duration"},
		{name: "every too short", expr: "@every 500ms", wantErr: "at least 1s"},
		{name: "every fraction", expr: "@every 1500ms", wantErr: "whole number"},
		{name: "every negative", expr: "@every -5s", wantErr: "at least 1s"},
		{name: "unknown descriptor", expr: "@fortnightly", wantErr: "is invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tt, err := Parse(tc.expr, tc.loc, anchor)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			got := tc.after
			for _, w := range tc.want {
				got = tt.Next(got)
				require.Equal(t, w, got)
			}
		})
	}
}

func TestZone(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"": true, "UTC": true, "Europe/Paris": true, "America/New_York": true,
		"Local": false, "Mars/Olympus": false, "../../etc/passwd": false, "/etc/localtime": false,
	} {
		loc, err := Zone(name)
		if ok {
			require.NoError(t, err, name)
			require.NotNil(t, loc)
		} else {
			require.Error(t, err, name)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	every2 := Every{Anchor: anchor, Period: 2 * time.Second}
	hourly, err := Parse("0 * * * *", time.UTC, anchor)
	require.NoError(t, err)
	minutely, err := Parse("* * * * *", time.UTC, anchor)
	require.NoError(t, err)
	tests := []struct {
		name string
		tt   Timetable
		st   State
		now  time.Time
		want Decision
	}{
		{name: "not due", tt: every2, st: State{Next: anchor.Add(2 * time.Second)}, now: anchor.Add(time.Second),
			want: Decision{Next: anchor.Add(2 * time.Second)}},
		{name: "disabled (no next)", tt: every2, st: State{}, now: anchor.Add(time.Hour), want: Decision{}},
		{name: "due exactly", tt: every2, st: State{Next: anchor.Add(2 * time.Second), Overlap: OverlapSkip},
			now:  anchor.Add(2 * time.Second),
			want: Decision{Due: true, Fire: true, FireAt: anchor.Add(2 * time.Second), Next: anchor.Add(4 * time.Second)}},
		{name: "late within the period", tt: every2, st: State{Next: anchor.Add(2 * time.Second)},
			now:  anchor.Add(3500 * time.Millisecond),
			want: Decision{Due: true, Fire: true, FireAt: anchor.Add(2 * time.Second), Next: anchor.Add(4 * time.Second)}},
		{name: "10s outage: only the latest missed fire", tt: every2, st: State{Next: anchor.Add(2 * time.Second)},
			now:  anchor.Add(12500 * time.Millisecond),
			want: Decision{Due: true, Fire: true, FireAt: anchor.Add(12 * time.Second), Next: anchor.Add(14 * time.Second)}},
		{name: "overlap skip while active", tt: every2,
			st:   State{Next: anchor.Add(2 * time.Second), Overlap: OverlapSkip, PreviousActive: true},
			now:  anchor.Add(2 * time.Second),
			want: Decision{Due: true, FireAt: anchor.Add(2 * time.Second), Next: anchor.Add(4 * time.Second)}},
		{name: "overlap allow while active", tt: every2,
			st:   State{Next: anchor.Add(2 * time.Second), Overlap: OverlapAllow, PreviousActive: true},
			now:  anchor.Add(2 * time.Second),
			want: Decision{Due: true, Fire: true, FireAt: anchor.Add(2 * time.Second), Next: anchor.Add(4 * time.Second)}},
		{name: "hourly after a three-day outage", tt: hourly, st: State{Next: at("2026-03-01T11:00:00Z")},
			now:  at("2026-03-04T17:42:10Z"),
			want: Decision{Due: true, Fire: true, FireAt: at("2026-03-04T17:00:00Z"), Next: at("2026-03-04T18:00:00Z")}},
		{name: "minutely after a year", tt: minutely, st: State{Next: at("2026-03-01T10:01:00Z")},
			now:  at("2027-03-01T10:00:30Z"),
			want: Decision{Due: true, Fire: true, FireAt: at("2027-03-01T10:00:00Z"), Next: at("2027-03-01T10:01:00Z")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, Decide(tc.tt, tc.st, tc.now))
		})
	}
}

// TestLatestMatchesWalk checks the look-back search against stepping through
// every fire time, for sparse and dense expressions and many outages.
func TestLatestMatchesWalk(t *testing.T) {
	t.Parallel()
	ny, err := Zone("America/New_York")
	require.NoError(t, err)
	for _, expr := range []string{"* 0-5 * * *", "30 2 * * 1", "0 0 1 * *", "*/7 * * * *", "@every 17s", "@every 90m"} {
		tt, err := Parse(expr, ny, anchor)
		require.NoError(t, err)
		next := tt.Next(anchor)
		for _, outage := range []time.Duration{0, time.Second, 59 * time.Minute, 26 * time.Hour, 40 * 24 * time.Hour, 200 * 24 * time.Hour} {
			now := next.Add(outage)
			want := next
			for n := tt.Next(want); !n.After(now); n = tt.Next(want) {
				want = n
			}
			require.Equal(t, want, Latest(tt, next, now), "%s after %s", expr, outage)
		}
	}
}

func TestRunID(t *testing.T) {
	t.Parallel()
	fire := at("2026-03-01T10:00:02Z")
	require.Equal(t, "s1.20260301T100002Z", RunID("s1", fire))
	require.Equal(t, RunID("s1", fire), RunID("s1", fire.In(time.FixedZone("x", 3600))))
	require.NotEqual(t, RunID("s1", fire), RunID("s1", fire.Add(time.Second)))
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"* * * * *", "@every 2s", "@daily", "0 0 30 2 *", "@every 1h30m", "1-5/2 * * * MON-FRI"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		tt, err := Parse(expr, time.UTC, anchor)
		if err != nil {
			return
		}
		n := tt.Next(anchor)
		if n.IsZero() || !n.After(anchor) {
			t.Fatalf("%q: Next(%s) = %s", expr, anchor, n)
		}
		_ = Decide(tt, State{Next: n, Overlap: OverlapSkip}, n.Add(time.Hour))
	})
}
