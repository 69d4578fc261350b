package httpserver

// Limits are the server's bounds, Defaults filled in: the tests check
// what New made of what it was given.
func (s *Server) Limits() Limits { return s.limits }
