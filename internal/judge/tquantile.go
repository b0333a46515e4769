package judge

import "math"

// tQuantileAt is Student's t quantile for 1-alpha with df degrees of
// freedom, for any alpha: the sequential looks (sequential.go) each use
// their own share of the false-alarm chance, which tTable does not hold.
// It inverts tUpper by bisection.
func tQuantileAt(df int, alpha float64) float64 {
	if df < 1 || !(alpha > 0) {
		return math.Inf(1)
	}
	if alpha >= 0.5 {
		return 0
	}
	lo, hi := 0.0, 1.0
	for tUpper(hi, df) > alpha {
		lo, hi = hi, 2*hi
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-9*hi; i++ {
		if mid := (lo + hi) / 2; tUpper(mid, df) > alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// tUpper is the chance that Student's t with df degrees of freedom
// exceeds t >= 0, from the closed forms for whole df (Abramowitz and
// Stegun 26.7.3 and 26.7.4): with theta = atan(t/sqrt(df)), P(|T| < t) is
// a finite series in sin and cos of theta.
func tUpper(t float64, df int) float64 {
	theta := math.Atan(t / math.Sqrt(float64(df)))
	s, c := math.Sin(theta), math.Cos(theta)
	var a float64
	if df%2 == 1 {
		sum, term := 0.0, c
		if df > 1 {
			sum = term
			for k := 3; k <= df-2; k += 2 {
				term *= c * c * float64(k-1) / float64(k)
				sum += term
			}
		}
		a = 2 / math.Pi * (theta + s*sum)
	} else {
		sum, term := 1.0, 1.0
		for k := 2; k <= df-2; k += 2 {
			term *= c * c * float64(k-1) / float64(k)
			sum += term
		}
		a = s * sum
	}
	return (1 - a) / 2
}

// studentBoundAt is studentBound at alpha instead of PairedAlpha.
func studentBoundAt(n int, sd, alpha float64) float64 {
	if alpha == PairedAlpha {
		return studentBound(n, sd) // the table, as every fixed gate reads it
	}
	if n < 2 {
		return 0
	}
	return tQuantileAt(n-1, alpha) * sd / math.Sqrt(float64(n))
}
