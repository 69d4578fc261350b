package hold

import "github.com/tickscope/tickscope/internal/timerstate"

// ProgramRunning and WhileState are timerstate's, named here too because
// hold's results (WhileReport, StartupState) and HoldOptions.Changed carry
// them.
type (
	ProgramRunning = timerstate.ProgramRunning
	WhileState     = timerstate.WhileState
)
