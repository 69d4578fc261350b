package seam

// Shell is what the desktop's shell does for tickscope ui: open a page in
// the user's default browser, and run tickscope again elevated (Windows'
// "runas" verb, which shows the UAC prompt). Each OS implements it in
// package platform (shell_*.go); sim.Shell records the calls for
// tests and for ui --simulate.
type Shell interface {
	// OpenURL opens url, an address or a local HTML file's path, in the
	// default browser and returns once the browser has been asked to (not
	// when the page has loaded). What it is given is on a command line
	// other local users can read: tickscope ui gives it a file's path,
	// never its token.
	OpenURL(url string) error
	// RunElevated runs the executable at exe with args elevated, after the
	// user consents, waits for it to exit and returns its exit code. Where
	// the OS has no such consent prompt it returns ErrUnsupported; a user
	// who declines gives an error.
	RunElevated(exe string, args []string) (exitCode int, err error)
}
