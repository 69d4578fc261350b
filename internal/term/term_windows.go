package term

import "golang.org/x/sys/windows"

// keysOneByOne turns off line input and echo on the console and nothing
// else: processed input keeps Ctrl+C a signal.
func keysOneByOne(fd int) (undo func(), err error) {
	h := windows.Handle(fd)
	var old uint32
	if err := windows.GetConsoleMode(h, &old); err != nil {
		return nil, err
	}
	mode := old &^ (windows.ENABLE_LINE_INPUT | windows.ENABLE_ECHO_INPUT)
	if err := windows.SetConsoleMode(h, mode); err != nil {
		return nil, err
	}
	return func() { windows.SetConsoleMode(h, old) }, nil
}
