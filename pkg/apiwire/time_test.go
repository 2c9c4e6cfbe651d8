package apiwire

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTimeJSON(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name string
		in   Time
		want string
	}{
		{name: "utc with ms", in: At(time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)), want: `"2026-01-02T03:04:05.006Z"`},
		{name: "whole second keeps .000", in: At(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), want: `"2026-01-02T03:04:05.000Z"`},
		{name: "other zone in UTC, ns truncated", in: At(time.Date(2026, 1, 2, 4, 4, 5, 6_999_999, paris)), want: `"2026-01-02T03:04:05.006Z"`},
		{name: "unix ms", in: UnixMilli(1_767_323_045_006), want: `"2026-01-02T03:04:05.006Z"`},
		{name: "zero", in: Time{}, want: `""`},
		{name: "unset ms", in: UnixMilli(0), want: `""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tt.in)
			if err != nil || string(got) != tt.want {
				t.Fatalf("Marshal = %s, %v; want %s", got, err, tt.want)
			}
			if s := tt.in.String(); `"`+s+`"` != tt.want {
				t.Fatalf("String = %q; want %s", s, tt.want)
			}
			var back Time
			if err := json.Unmarshal(got, &back); err != nil || !back.Equal(tt.in.Truncate(time.Millisecond)) {
				t.Fatalf("Unmarshal(%s) = %v, %v; want %v", got, back, err, tt.in)
			}
		})
	}
}

func TestTimeUnmarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		want    time.Time
		wantErr bool
	}{
		{name: "rfc3339 ms", input: `"2026-01-02T03:04:05.123Z"`, want: time.Date(2026, 1, 2, 3, 4, 5, 123e6, time.UTC)},
		{name: "rfc3339 offset", input: `"2026-01-02T04:04:05+01:00"`, want: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{name: "empty", input: `""`},
		{name: "null", input: `null`},
		{name: "unix ms is not a time the api sends", input: `1767323045123`, wantErr: true},
		{name: "garbage text", input: `"yesterday"`, wantErr: true},
		{name: "object", input: `{}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got Time
			err := json.Unmarshal([]byte(tt.input), &got)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Unmarshal(%s) = %v; want an error", tt.input, got)
				}
				return
			}
			if err != nil || !tt.want.Equal(got.Time) {
				t.Fatalf("Unmarshal(%s) = %v, %v; want %v", tt.input, got.Time, err, tt.want)
			}
		})
	}
}

// TestUnsetTimesOmitted checks that omitzero leaves unset times out and
// that a time field without it writes "".
func TestUnsetTimesOmitted(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Schedule{ID: "s", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"s","workflow":"","cron":"","timezone":"","input":{},"enabled":false,"overlap":"","created_at":"","updated_at":""}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

// TestTimeLayoutDigits checks appendLayout's hand-written digits against
// AppendFormat with TimeLayout, which they stand in for: at the edges of
// the years it writes itself, around them, and at random instants.
func TestTimeLayoutDigits(t *testing.T) {
	t.Parallel()
	edges := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(2024, 2, 29, 12, 30, 0, 1_000_000, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999_000_000, time.UTC), time.Unix(-1<<62, 0), time.Unix(1<<62, 0),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		edges = append(edges, time.Unix(rng.Int64N(400_000_000_000)-70_000_000_000, rng.Int64N(1e9)))
	}
	for _, tm := range edges {
		u := tm.UTC()
		require.Equal(t, u.Format(TimeLayout), string(appendLayout(nil, u)), "%v", tm)
	}
}

func FuzzTimeLayoutDigits(f *testing.F) {
	f.Add(int64(1_767_323_045), int64(6_000_000))
	f.Add(int64(253_402_300_799), int64(999_999_999))
	f.Add(int64(-62_167_219_200), int64(0))
	f.Fuzz(func(t *testing.T, sec, ns int64) {
		u := time.Unix(sec, ns).UTC()
		require.Equal(t, u.Format(TimeLayout), string(appendLayout(nil, u)))
	})
}
