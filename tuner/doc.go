// Package tuner is symmtune's host: it finds kernel plugins, starts one
// plugin process per rank, connects their symmetric memory, and runs trials
// in lockstep — every rank gets the same config at the same time, a config
// is scored by its slowest rank, and a config that hangs, crashes or
// computes a wrong answer is recorded as such and never chosen. Search
// drives a strategy (tuner/strategy) over a kernel's space, writes one JSON
// line per trial (the trial log, whose format internal/triallog owns), and
// hands the winner to the cache. Jobs come from job files and the CLI's
// flags, both starting from DefaultJob.
package tuner
