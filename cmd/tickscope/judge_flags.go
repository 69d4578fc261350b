package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/plan"
	"github.com/tickscope/tickscope/internal/sweep"
)

// judgeFlags are the judgement flags bench and analyze share.
type judgeFlags struct {
	prefer               string
	budgetP50, budgetP95 time.Duration
	budgetLateness       time.Duration
	rows, asJSON         bool
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
	return plan.Preferences(j.prefer, j.budgetP50, j.budgetP95, j.budgetLateness)
}
