// Command lattigo-ntt times Lattigo v6.2.0's forward NTT of one limb, as the Go peer of
// `tessera bench ntt`. It prints one JSON line in the same shape.
//
// Usage: go run . -logn 16 -q 1152921504606584833 -reps 201
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/tuneinsight/lattigo/v6/ring"
)

func main() {
	logN := flag.Int("logn", 16, "log2 of the ring degree")
	q := flag.Uint64("q", 1152921504606584833, "NTT-friendly prime (q = 1 mod 2N)")
	reps := flag.Int("reps", 201, "timed repetitions (median reported)")
	flag.Parse()

	n := 1 << *logN
	r, err := ring.NewRing(n, []uint64{*q})
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	s := r.SubRings[0]
	a := make([]uint64, n)
	for i := range a {
		a[i] = (uint64(i) * 0x9E3779B9) % *q
	}
	for i := 0; i < *reps/10+3; i++ {
		s.NTT(a, a)
	}
	t := make([]float64, *reps)
	for i := range t {
		start := time.Now()
		s.NTT(a, a)
		t[i] = time.Since(start).Seconds()
	}
	sort.Float64s(t)
	bits := 0
	for v := *q; v > 0; v >>= 1 {
		bits++
	}
	out, _ := json.Marshal(map[string]any{
		"op": "ntt", "impl": "lattigo-v6.2.0", "logn": *logN, "bits": bits, "q": *q,
		"threads": 1, "median_s": t[len(t)/2], "min_s": t[0],
	})
	fmt.Println(string(out))
}
