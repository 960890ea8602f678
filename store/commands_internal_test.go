package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// newMiniStore returns a Store on a fresh miniredis, and the miniredis.
func newMiniStore(t *testing.T) (*Store, *miniredis.Miniredis) {
	t.Helper()
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := New(context.Background(), rdb, Options{Prefix: "x:", WriteLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

// TestCommandsGoThroughTheRunner checks that a single command is counted like every pipeline and
// answers as the client would: its value, or rdb.Nil for a missing field.
func TestCommandsGoThroughTheRunner(t *testing.T) {
	s, m := newMiniStore(t)
	m.HSet("x:{u:ann}", "created", "17")
	for _, tc := range []struct {
		field, want string
		nil         bool
	}{
		{field: "created", want: "17"},
		{field: "missing", nil: true},
	} {
		ctx, count := rdb.WithRedisCount(context.Background())
		got, err := s.cmd().HGet(ctx, "x:{u:ann}", tc.field).Result()
		if tc.nil != isNil(err) || (!tc.nil && err != nil) || got != tc.want {
			t.Errorf("HGET %s: %q, %v; want %q (nil reply %v)", tc.field, got, err, tc.want, tc.nil)
		}
		if rt, n := count.RoundTrips.Load(), count.Commands.Load(); rt != 1 || n != 1 {
			t.Errorf("HGET %s counted %d round trips, %d commands; want 1, 1", tc.field, rt, n)
		}
	}
}

// TestScanIteratorWalksEveryPage walks sorted sets and hashes of several sizes a few elements per
// page, and checks that it meets every element once, as go-redis's ScanIterator does.
func TestScanIteratorWalksEveryPage(t *testing.T) {
	s, m := newMiniStore(t)
	ctx := context.Background()
	for _, n := range []int{0, 1, 3, 7, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			zkey, hkey := fmt.Sprintf("x:z%d", n), fmt.Sprintf("x:h%d", n)
			var want []string
			for i := range n {
				member := fmt.Sprintf("m%02d", i)
				m.ZAdd(zkey, float64(i), member)
				m.HSet(hkey, member, "v")
				want = append(want, member)
			}
			for _, tc := range []struct {
				kind string
				iter *rdb.ScanIterator
			}{
				{"ZSCAN", s.cmd().ZScanIterator(zkey, "", 3)},
				{"HSCAN", s.cmd().HScanIterator(hkey, "", 3)},
			} {
				var got []string
				for i := 0; tc.iter.Next(ctx); i++ {
					if i%2 == 0 { // members (fields) and scores (values) alternate
						got = append(got, tc.iter.Val())
					}
				}
				if err := tc.iter.Err(); err != nil {
					t.Fatalf("%s: %v", tc.kind, err)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s met %v; want %v", tc.kind, got, want)
				}
			}
		})
	}
}

// TestScanIteratorStopsOnError checks that a walk whose page fails ends with the error.
func TestScanIteratorStopsOnError(t *testing.T) {
	s, m := newMiniStore(t)
	m.Set("x:str", "not a set")
	it := s.cmd().ZScanIterator("x:str", "", 3)
	if it.Next(context.Background()) {
		t.Fatalf("a walk of a string met %q", it.Val())
	}
	if err := it.Err(); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("error %v; want WRONGTYPE", err)
	}
}
