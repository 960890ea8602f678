package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestClientAddressIPv6Prefix: the per-address limits count an IPv6 client by its /64, the
// smallest block a host is given (RFC 6177): counting each of its 2^64 addresses apart would let
// any one host make as many sign-ups and failed log-ins as it likes. IPv4, IPv4-mapped IPv6 and
// other /64s stay apart.
func TestClientAddressIPv6Prefix(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"[2001:db8:1:2::a]:50000", "[2001:db8:1:2:ffff:1:2:3]:50001", true},
		{"2001:db8:1:2::a", "2001:db8:1:2::b", true},
		{"2001:db8:1:2::a", "2001:db8:1:3::a", false},
		{"[fe80::1%eth0]:1", "fe80::2", true},
		{"192.0.2.1:1000", "192.0.2.1:2000", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"[::ffff:192.0.2.1]:1", "192.0.2.1:1", true},
		{"[::ffff:192.0.2.1]:1", "192.0.2.2:1", false},
	} {
		ctx := context.Background()
		a, b := store.ClientFrom(store.WithClient(ctx, c.a)), store.ClientFrom(store.WithClient(ctx, c.b))
		if (a == b) != c.same {
			t.Errorf("%s → %q, %s → %q: same client %v, want %v", c.a, a, c.b, b, a == b, c.same)
		}
	}
}

// TestSignUpsPerIPv6Host: sign-ups from one IPv6 /64 count in one window, whatever the addresses
// they come from in it.
func TestSignUpsPerIPv6Host(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s := b.NewStore(t, store.Options{WriteLimit: 120, Auth: store.AuthLimits{SignUpsPerAddress: 2, SignUpWindow: time.Hour}})
		for i := range 3 {
			ctx := store.WithClient(context.Background(), fmt.Sprintf("[2001:db8:1:2::%x]:4%d000", i+1, i))
			_, err := s.SignUp(ctx, fmt.Sprint("user", i), "password1")
			if i < 2 && err != nil {
				t.Fatalf("sign-up %d: %v", i, err)
			}
			if i == 2 && !store.IsKind(err, store.KindRateLimited) {
				t.Errorf("a third sign-up from the same /64: %v, want RATE_LIMITED", err)
			}
		}
	})
}
