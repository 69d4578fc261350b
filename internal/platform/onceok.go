package platform

import "sync"

// onceOK is read called until it first succeeds, then its result forever:
// unlike sync.OnceValues, a failure (a timeout, a process that could not
// start) is not kept for the life of a holder or a watch.
func onceOK[T any](read func() (T, error)) func() (T, error) {
	var mu sync.Mutex
	var kept T
	ok := false
	return func() (T, error) {
		mu.Lock()
		defer mu.Unlock()
		if ok {
			return kept, nil
		}
		v, err := read()
		if err == nil {
			kept, ok = v, true
		}
		return v, err
	}
}
