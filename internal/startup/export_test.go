package startup

// AsStartup tells whether a command line runs the startup holder.
var AsStartup = asStartup
