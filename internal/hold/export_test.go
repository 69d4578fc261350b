package hold

// SetLookupAccount replaces the Windows account lookup of --while-user
// until the returned function puts it back.
func SetLookupAccount(lookup func(string) (sid, problem string, err error)) (restore func()) {
	was := lookupAccount
	lookupAccount = lookup
	return func() { lookupAccount = was }
}

// NoSuchAccount is what --while-user says of a name that names no account.
const NoSuchAccount = noSuchAccount
