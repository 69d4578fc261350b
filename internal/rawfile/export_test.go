package rawfile

// Parse is parse, for the external tests: a document in memory, checked as
// ReadFile checks a file.
var Parse = parse
