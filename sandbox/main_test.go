package sandbox

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the test binary as the helper process a test started (the
// environment names its role) instead of running the tests.
func TestMain(m *testing.M) {
	for env, helper := range map[string]func(string) error{orphanHelperEnv: orphanHelper, pullCrashEnv: pullCrashWriter} {
		if spec := os.Getenv(env); spec != "" {
			if err := helper(spec); err != nil {
				fmt.Fprintln(os.Stderr, env+":", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}
