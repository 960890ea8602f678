package store

import (
	"math"
	"testing"
)

// TestReplyPow holds replyPow, the power the reply orders' CONTROVERSIAL computes with + - * /
// alone, to math.Pow: within 1e-14 of it, relatively, for every vote count up to 300 each way.
func TestReplyPow(t *testing.T) {
	worst := 0.0
	for up := 1; up <= 300; up++ {
		for down := 1; down <= 300; down++ {
			n, x := float64(up+down), float64(min(up, down))/float64(max(up, down))
			got, want := replyPow(n, x), math.Pow(n, x)
			if d := math.Abs(got-want) / want; d > worst {
				worst = d
			}
			if math.Abs(got-want) > 1e-14*want {
				t.Fatalf("replyPow(%v, %v) = %.17g, math.Pow %.17g", n, x, got, want)
			}
		}
	}
	t.Logf("worst relative difference: %.3g", worst)
	for _, tc := range []struct {
		n, x, want float64
	}{{1, 1, 1}, {2, 0, 1}, {2, 1, 2}, {4, 0.5, 2}, {1024, 1, 1024}, {1e6, 1, 1e6}} {
		if got := replyPow(tc.n, tc.x); math.Abs(got-tc.want) > 1e-14*tc.want {
			t.Errorf("replyPow(%v, %v) = %.17g, want %v", tc.n, tc.x, got, tc.want)
		}
	}
}
