package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/options"
)

// harden applies the command-line rules that hold for every command, once,
// to the finished command tree under root, so that no command can miss
// one:
//   - the parser's own errors (unknown flag, bad value) are usage errors
//     whose echoed values are quoted and shortened (flagError);
//   - every flag is given once, an integer in decimal digits only, and a
//     duration in whole nanoseconds (strict);
//   - a string flag given an empty value is refused before the command
//     runs (emptyValues), ahead of root's PersistentPreRunE;
//   - an unknown command, and completion of a shell cobra does not
//     offer, exit 2 naming what is offered (cobra printed the help and
//     exited 0 for "completion tcsh").
func harden(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	preRun := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := emptyValues(cmd.Flags()); err != nil {
			return err
		}
		if preRun != nil {
			return preRun(cmd, args)
		}
		return nil
	}
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return options.Usagef("unknown command %q for %q; the commands are %s", args[0], cmd.CommandPath(), commandNames(cmd))
		}
		return nil
	}
	// cobra adds its completion command when it executes; adding it now
	// lets its arguments be checked like any command's. It takes root's
	// output as it is added: set it before.
	root.InitDefaultCompletionCmd()
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		strict(cmd.Flags())
		strict(cmd.PersistentFlags())
		if cmd.Name() == "completion" && cmd.Parent() == root {
			completion(cmd)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completion makes "completion SHELL" for a shell not offered a usage error
// naming the shells; "completion" alone prints its help, as before.
func completion(cmd *cobra.Command) {
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return options.Usagef("completion %q: the shells offered are %s", args[0], commandNames(cmd))
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// commandNames lists the commands under cmd that a user may type.
func commandNames(cmd *cobra.Command) string {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
