package rdb_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"

	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// receive waits for the next message, failing the test after a generous deadline.
func receive(t *testing.T, sub *rdb.Subscription) *rdb.Message {
	t.Helper()
	select {
	case m, ok := <-sub.Messages():
		if !ok {
			t.Fatal("messages closed")
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10s")
	}
	return nil
}

// publishMany publishes on each channel, in one pipeline of client, its index plus first, as the
// store publishes: SPUBLISH on a cluster that supports it (sharded), PUBLISH otherwise.
func publishMany(ctx context.Context, client rdb.UniversalClient, sharded bool, channels []string, first int) error {
	pipe := client.Pipeline()
	for i, ch := range channels {
		if sharded {
			pipe.SPublish(ctx, ch, strconv.Itoa(first+i))
		} else {
			pipe.Publish(ctx, ch, strconv.Itoa(first+i))
		}
	}
	_, err := pipe.Exec(ctx)
	return err
}

// TestPubSub publishes on channels that hash to many slots (on a cluster, every master) and
// checks delivery, unsubscription and closing, through sharded pub/sub on a cluster and classic
// pub/sub elsewhere.
func TestPubSub(t *testing.T) {
	storetest.Run(t, func(t *testing.T, b storetest.Backend) {
		s := b.NewStore(t, store.Options{})
		ctx := context.Background()
		sub := rdb.NewSubscription(ctx, s.Runner())
		defer sub.Close()
		var chans []string
		for i := range 12 {
			chans = append(chans, fmt.Sprintf("%sev:{p:%d}", s.Options().Prefix, i))
		}
		if err := sub.Subscribe(ctx, chans...); err != nil {
			t.Fatal(err)
		}
		if err := sub.Subscribe(ctx, chans[0]); err != nil { // subscribing twice is harmless
			t.Fatal(err)
		}
		if cc, ok := b.Client.(*rdb.ClusterClient); ok {
			// On a cluster the subscriptions are sharded: each lives on its channel's master.
			for _, ch := range chans {
				node, err := cc.MasterForKey(ctx, ch)
				if err != nil {
					t.Fatal(err)
				}
				n, err := node.Do(ctx, "pubsub", "shardnumsub", ch).Slice()
				if err != nil || len(n) != 2 || n[1] != int64(1) {
					t.Fatalf("PUBSUB SHARDNUMSUB %s on its master = %v, %v; want 1 subscriber", ch, n, err)
				}
			}
		}
		// Half one by one, half in one pipeline, as writes announce several events at once.
		for i, ch := range chans[:len(chans)/2] {
			if err := s.Publish(ctx, ch, fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := publishMany(ctx, b.Client, s.Runner().ShardedPubSub(), chans[len(chans)/2:], len(chans)/2); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for range chans {
			m := receive(t, sub)
			got[m.Channel] = m.Payload
		}
		for i, ch := range chans {
			if got[ch] != fmt.Sprint(i) {
				t.Errorf("channel %s delivered %q, want %q", ch, got[ch], fmt.Sprint(i))
			}
		}

		// Messages of one channel arrive in order.
		for i := range 20 {
			if err := s.Publish(ctx, chans[1], fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			if m := receive(t, sub); m.Channel != chans[1] || m.Payload != fmt.Sprint(i) {
				t.Fatalf("message %d: %s %q", i, m.Channel, m.Payload)
			}
		}

		// After Unsubscribe returns, the channel delivers nothing: the next message is the other
		// channel's, published after it.
		if err := sub.Unsubscribe(ctx, chans[2]); err != nil {
			t.Fatal(err)
		}
		if err := s.Publish(ctx, chans[2], "gone"); err != nil {
			t.Fatal(err)
		}
		if err := s.Publish(ctx, chans[3], "still here"); err != nil {
			t.Fatal(err)
		}
		if m := receive(t, sub); m.Channel != chans[3] || m.Payload != "still here" {
			t.Fatalf("after unsubscribing got %s %q", m.Channel, m.Payload)
		}

		// A message published by another process (another store on the same Redis) arrives.
		other := b.NewStore(t, store.Options{Prefix: s.Options().Prefix})
		if err := other.Publish(ctx, chans[4], "from afar"); err != nil {
			t.Fatal(err)
		}
		if m := receive(t, sub); m.Channel != chans[4] || m.Payload != "from afar" {
			t.Fatalf("got %s %q", m.Channel, m.Payload)
		}

		if err := sub.Close(); err != nil {
			t.Fatal(err)
		}
		if _, ok := <-sub.Messages(); ok {
			t.Fatal("messages still open after Close")
		}
		if err := sub.Subscribe(ctx, chans[0]); err == nil {
			t.Fatal("Subscribe after Close succeeded")
		}
	})
}
