package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/sweep"
)

// judgeFlags are the judgement flags bench and analyze share.
type judgeFlags struct {
	prefer         string
	budgetP50      time.Duration
	budgetP95      time.Duration
	budgetLateness time.Duration
	rows           bool
	asJSON         bool
}

func (j *judgeFlags) register(f *pflag.FlagSet) {
	d := sweep.DefaultPreferences()
	f.StringVar(&j.prefer, "prefer", d.Prefer, "latency (lowest p50 that passes the gates) or power (coarsest band inside the budget)")
	f.DurationVar(&j.budgetP50, "budget-p50", time.Duration(d.BudgetP50), "with --prefer power: the p50 a band may reach")
	f.DurationVar(&j.budgetP95, "budget-p95", time.Duration(d.BudgetP95), "with --prefer power: the p95 a band may reach")
	f.DurationVar(&j.budgetLateness, "budget-lateness", time.Duration(d.BudgetLateness), "Linux, with --prefer power: the p99 lateness a setting may reach")
	f.BoolVar(&j.rows, "rows", false, "print every measured period, with its interference")
	f.BoolVar(&j.asJSON, "json", false, "print the whole result as JSON")
}

func (j *judgeFlags) preferences() (sweep.Preferences, error) {
	if j.prefer != "latency" && j.prefer != "power" {
		return sweep.Preferences{}, badFlag("prefer", j.prefer, "allowed latency or power")
	}
	if j.budgetP50 <= 0 {
		return sweep.Preferences{}, badFlag("budget-p50", j.budgetP50, "must be above 0")
	}
	if j.budgetP95 <= 0 {
		return sweep.Preferences{}, badFlag("budget-p95", j.budgetP95, "must be above 0")
	}
	if j.budgetLateness <= 0 {
		return sweep.Preferences{}, badFlag("budget-lateness", j.budgetLateness, "must be above 0")
	}
	return sweep.Preferences{Prefer: j.prefer, BudgetP50: int64(j.budgetP50), BudgetP95: int64(j.budgetP95), BudgetLateness: int64(j.budgetLateness)}, nil
}
