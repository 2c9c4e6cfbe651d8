// Package schedule is the pure core of Braid's schedules: it parses a cron
// expression (five fields, descriptors such as @daily, and @every D) in a
// time zone into a Timetable, decides what a schedule does at a given
// instant (fire, skip because the previous run is still active, or wait),
// and derives the run id of a fire. It has no Redis, Kafka or clock:
// time arrives as a value, so every decision is table-tested.
//
// robfig/cron/v3 is used as a parser only; firing is the orchestrator's
// leader-leased scheduler's job.
package schedule
