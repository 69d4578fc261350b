package nativewait

import "sync"

// requestSet is a process's one timer-period request, shared by everything
// in the process that holds a period. Windows keeps one
// NtSetTimerResolution request per process: a second request replaces the
// first in place, and one withdrawal withdraws it. So the set counts the
// holds and makes the one request for all of them: the finest period held
// is the one requested; when the hold of the finest is released the next
// finest is requested in its place, and the request is withdrawn when the
// last hold is released.
type requestSet struct {
	mu sync.Mutex
	// request replaces the request in force (from, 0 for none) with to
	// (0 withdraws it) and returns the period in force after it.
	request func(from, to uint32) (current uint32, err error)
	// query reads the period in force, for a hold that needs no request.
	query  func() uint32
	held   map[int]uint32 // the outstanding holds' periods (100 ns), by id
	nextID int
	active uint32 // the period requested now, 0 for none
}

// hold adds a hold of units (100 ns, more than 0) and returns the period
// in force after it and the release of the hold. The release makes a
// request only when the hold was the finest; its error is that request's.
// A second call of it does nothing and returns nil.
func (s *requestSet) hold(units uint32) (current uint32, release func() error, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == 0 || units < s.active {
		current, err = s.request(s.active, units)
		if err != nil {
			return 0, nil, err
		}
		s.active = units
	} else {
		current = s.query()
	}
	if s.held == nil {
		s.held = map[int]uint32{}
	}
	id := s.nextID
	s.nextID++
	s.held[id] = units
	var once sync.Once
	return current, func() error {
		var err error
		once.Do(func() { err = s.release(id) })
		return err
	}, nil
}

func (s *requestSet) release(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, id)
	finest := uint32(0)
	for _, units := range s.held {
		if finest == 0 || units < finest {
			finest = units
		}
	}
	if finest == s.active {
		return nil
	}
	if _, err := s.request(s.active, finest); err != nil {
		// The request in force is unknown now: the next hold asks anew.
		s.active = 0
		return err
	}
	s.active = finest
	return nil
}
