package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// TestNoHalfDoneWritesAfterLostReplies writes through a proxy that loses Redis's replies, so that
// some writes are answered with an error after their atomic step ran. Once the repairer has run,
// with nobody calling rebuild, every post that exists sits in exactly the rankings and lists its
// hash implies, every follow is mirrored on both sides, and a sign-up answered with an error can
// be retried without a conflict.
func TestNoHalfDoneWritesAfterLostReplies(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		rc, ok := b.Client.(*rdb.Client)
		if !ok {
			t.Skip("the proxy sits in front of one node")
		}
		ctx := context.Background()
		var skew atomic.Int64
		clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		direct := b.NewStore(t, store.Options{Now: clock})
		proxy := storetest.NewProxy(t, rc.Options().Addr)
		lc := rdb.NewPlainClient(&rdb.Options{Addr: proxy.Addr(), MaxRetries: -1}) // every lost reply is an error
		t.Cleanup(func() { _ = lc.Close() })
		lossy, err := store.New(ctx, lc, direct.Options())
		if err != nil {
			t.Fatal(err)
		}
		proxy.Lose(80_000) // 8% of reply chunks

		w := newWorld(t, direct, b.Client, 4, 0)
		failed := 0
		try := func(err error) {
			if err != nil {
				failed++
			}
		}
		var created []string
		for i := range 60 {
			p, err := lossy.CreatePost(ctx, uk(w.users[i%4]), store.NewPost{Title: fmt.Sprintf("post %d", i), Groups: w.groups[:1+i%3]})
			try(err)
			if err == nil {
				created = append(created, p.ID)
			}
		}
		for i, id := range created {
			_, err := lossy.VotePost(ctx, uk(w.users[(i+1)%4]), id, 1)
			try(err)
			switch i % 5 {
			case 0:
				_, err = lossy.SetPostGroups(ctx, uk(w.users[i%4]), id, []string{"ops"}, []string{"go"})
				try(err)
			case 1:
				try(lossy.DeletePost(ctx, uk(w.users[i%4]), id))
			}
		}
		for i := range 12 { // follow, and sometimes unfollow again
			a, b := w.users[i%4], w.users[(i+1+i/4)%4]
			if a == b {
				continue
			}
			_, err := lossy.Follow(ctx, uk(a), uk(b))
			try(err)
			if i%3 == 0 {
				_, err = lossy.Unfollow(ctx, uk(a), uk(b))
				try(err)
			}
		}
		var signUpsFailed []string
		for i := range 20 {
			name := fmt.Sprintf("late%02d", i)
			if _, err := lossy.SignUp(ctx, name, "password1"); err != nil {
				failed++
				signUpsFailed = append(signUpsFailed, name)
			}
		}
		if failed == 0 {
			t.Fatal("no write failed: the proxy lost no replies, so this test shows nothing")
		}
		t.Logf("%d writes answered with an error", failed)

		// A sign-up answered with an error is retried as a client would: it succeeds.
		for _, name := range signUpsFailed {
			if _, err := direct.SignUp(ctx, name, "password1"); err != nil {
				t.Errorf("retrying the sign-up of %s that was answered with an error: %v", name, err)
			}
		}
		// Someone else's password still gets a conflict.
		if _, err := direct.SignUp(ctx, "late00", "another password"); !store.IsKind(err, store.KindConflict) {
			t.Errorf("sign-up of a taken name with another password: %v, want conflict", err)
		}

		// Repair jobs, once the grace period is over, finish what the errors left.
		skew.Store(int64(store.RepairGrace + time.Second))
		if _, err := direct.Jobs().RunDue(ctx); err != nil {
			t.Fatalf("repair: %v", err)
		}
		// Every post there is, created with or without an error, is checked.
		l := direct.NewLoader()
		w.posts = nil
		for i := 1; i <= 200; i++ {
			p, err := l.Post(ctx, fmt.Sprintf("post:%d", i))
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("load post:%d: %v", i, err)
			}
			if p != nil {
				w.posts = append(w.posts, p)
			}
		}
		w.checkDerived(t)
		checkGraph(t, direct, w.users, 1000)
	})
}
