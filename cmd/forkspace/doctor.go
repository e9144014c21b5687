package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/sandbox"
)

func doctorCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Show what confinement this host offers exec",
		Long: "Probe the host for what exec's sandbox uses: bubblewrap, user namespaces, cgroups (v2 with\n" +
			"delegation, or v1), seccomp, slirp4netns and pasta, FUSE; say which mechanism enforces the\n" +
			"limits of a run, and run a confined probe command. Exits non-zero only when exec cannot run.",
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			rep := sandbox.Doctor(c.Context(), sandbox.Options{})
			if a.json {
				if err := a.printJSON(rep); err != nil {
					return err
				}
			} else {
				tw := table(a.stdout)
				for _, ch := range rep.Checks {
					mark := "ok"
					if !ch.OK {
						mark = "missing"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\n", ch.Name, mark, ch.Detail)
				}
				fmt.Fprintf(tw, "limits\t%s\t\n", rep.Limits)
				if rep.Exec {
					fmt.Fprintf(tw, "exec\tok\tconfined probe command ran\n")
				} else {
					fmt.Fprintf(tw, "exec\tunavailable\t%s\n", rep.ExecError)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if !rep.Exec {
				return fmt.Errorf("doctor: exec cannot run on this host: %s", rep.ExecError)
			}
			return nil
		},
	}
}
