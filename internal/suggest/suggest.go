// Package suggest finds the name a typo probably meant, for the "did you
// mean" of an error: a misspelt board key, tool or fleet group.
package suggest

// Closest is the known name nearest to name, when one is within two
// edits (insert, delete, substitute a byte) and nearer than any other.
func Closest(name string, known []string) (string, bool) {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best, best != ""
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
