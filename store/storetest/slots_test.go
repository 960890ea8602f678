package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

func TestSlot(t *testing.T) {
	for _, c := range []struct {
		key  string
		want int
	}{
		{"123456789", 12739}, // the CRC16/XMODEM check value 0x31C3
		{"foo", 12182},       // from the Redis Cluster specification's examples
		{"{foo}:bar", 12182},
		{"x{foo}y{z}", 12182},
		{"{}foo", Slot("{}foo")}, // an empty tag hashes the whole key
	} {
		if got := Slot(c.key); got != c.want {
			t.Errorf("Slot(%q) = %d, want %d", c.key, got, c.want)
		}
	}
	if Slot("{}foo") == Slot("foo") {
		t.Errorf("an empty hash tag must hash the whole key")
	}
}

func TestSlotCheckRejectsCrossSlot(t *testing.T) {
	m := miniredis.RunT(t)
	c := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	c.AddHook(SlotCheck{})
	defer c.Close()
	ctx := context.Background()
	ok := []func() error{
		func() error { return c.MGet(ctx, "{a}1", "{a}2").Err() },
		func() error { return c.Eval(ctx, "return 1", []string{"{u:1}", "{u:1}:x"}).Err() },
		func() error { return c.Set(ctx, "x", 1, 0).Err() },
		func() error {
			_, err := c.TxPipelined(ctx, func(p rdb.Pipeliner) error {
				p.Set(ctx, "{t}a", 1, 0)
				p.Set(ctx, "{t}b", 1, 0)
				return nil
			})
			return err
		},
		func() error { // a pipeline may span slots
			_, err := c.Pipelined(ctx, func(p rdb.Pipeliner) error {
				p.Set(ctx, "a", 1, 0)
				p.Set(ctx, "b", 1, 0)
				return nil
			})
			return err
		},
	}
	for i, f := range ok {
		if err := f(); err != nil {
			t.Errorf("ok case %d: %v", i, err)
		}
	}
	bad := []func() error{
		func() error { return c.MGet(ctx, "a", "b").Err() },
		func() error { return c.Eval(ctx, "return 1", []string{"{u:1}", "{u:2}"}).Err() },
		func() error { return c.ZUnionStore(ctx, "{x}", &rdb.ZStore{Keys: []string{"{x}a", "{y}b"}}).Err() },
		func() error {
			_, err := c.TxPipelined(ctx, func(p rdb.Pipeliner) error {
				p.Set(ctx, "{t}a", 1, 0)
				p.Set(ctx, "{s}b", 1, 0)
				return nil
			})
			return err
		},
	}
	for i, f := range bad {
		if err := f(); err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
			t.Errorf("bad case %d: err = %v, want CROSSSLOT", i, err)
		}
	}
}
