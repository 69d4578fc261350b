package options

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

// unitNs are time.ParseDuration's units, in ns.
var unitNs = map[string]int64{
	"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6,
	"s": 1e9, "m": 60e9, "h": 3600e9,
}

// errNotDuration is the syntax error: it does not repeat the value, which
// the flag's error already names.
var errNotDuration = errors.New("not a duration: a number and a unit (ns, us, ms, s, m, h), such as 250us or 1.5ms")

// ParseDuration parses a duration as time.ParseDuration does ("1.5ms",
// "1h2m", "-3us", "0"), exactly, and refuses one that is not a whole
// number of nanoseconds or does not fit a time.Duration.
func ParseDuration(s string) (time.Duration, error) {
	total, ok := exactNs(s)
	switch {
	case !ok:
		return 0, errNotDuration
	case !total.IsInt():
		lower := new(big.Int).Quo(total.Num(), total.Denom()) // toward zero
		upper := new(big.Int).Add(lower, big.NewInt(int64(total.Sign())))
		if total.Sign() < 0 {
			lower, upper = upper, lower
		}
		return 0, fmt.Errorf("not a whole number of nanoseconds (it lies between %sns and %sns); durations are counted in whole ns", lower, upper)
	case !total.Num().IsInt64():
		return 0, fmt.Errorf("out of range: at most %v either way", time.Duration(math.MaxInt64))
	}
	return time.Duration(total.Num().Int64()), nil
}

// exactNs is s in ns as an exact fraction, with time.ParseDuration's
// syntax: [-+]? then one or more of a decimal number and a unit, or "0".
func exactNs(s string) (*big.Rat, bool) {
	rest := s
	negative := false
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		negative = rest[0] == '-'
		rest = rest[1:]
	}
	if rest == "0" {
		return new(big.Rat), true
	}
	if rest == "" {
		return nil, false
	}
	total := new(big.Rat)
	for rest != "" {
		i, digits, dots := 0, 0, 0
		for ; i < len(rest) && (rest[i] == '.' || rest[i] >= '0' && rest[i] <= '9'); i++ {
			if rest[i] == '.' {
				dots++
			} else {
				digits++
			}
		}
		number := rest[:i]
		rest = rest[i:]
		j := 0
		for j < len(rest) && rest[j] != '.' && (rest[j] < '0' || rest[j] > '9') {
			j++
		}
		unit, known := unitNs[rest[:j]]
		rest = rest[j:]
		if digits == 0 || dots > 1 || !known {
			return nil, false
		}
		whole, frac, _ := strings.Cut(number, ".")
		part, ok := new(big.Rat).SetString("0" + whole + "." + frac + "0")
		if !ok {
			return nil, false
		}
		total.Add(total, part.Mul(part, new(big.Rat).SetInt64(unit)))
	}
	if negative {
		total.Neg(total)
	}
	return total, true
}
