package store

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// TestCommentMetaPacking: packCommentMeta and unpackCommentMeta are inverse for the fields a
// comment has (an ord may be missing), write the parent as in ids and read it back in stored
// form; commentValues reads a packed hash and one of layout 5 alike, and asks no more than
// names of a post's.
func TestCommentMetaPacking(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fields  [len(commentMetaNames)]string
		packed  string
		layout6 string // the same fields as layout 6 packed them: decimal times
	}{
		{"top level", [...]string{"0", "1764219362000", "1766811362000", "0", "17"}, "0 ~migynnww +16v7k00 0 17", "0 1764219362000 1766811362000 0 17"},
		{"reply", [...]string{"000000000042", "1764219362000", "1766811362000", "3", "5"}, "42 ~migynnww +16v7k00 3 5", "42 1764219362000 1766811362000 3 5"},
		{"no ord", [...]string{"000000000004", "1", "2", "1", ""}, "4 ~1 +1 1 ", "4 1 2 1 "},
		{"closes before created", [...]string{"000000000004", "100", "40", "1", "2"}, "4 ~2s ~14 1 2", "4 100 40 1 2"},
		{"no closes", [...]string{"0", "100", "", "0", "3"}, "0 ~2s  0 3", "0 100  0 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := packCommentMeta(tc.fields); got != tc.packed {
				t.Fatalf("packed %q, want %q", got, tc.packed)
			}
			if got := unpackCommentMeta(tc.packed); got != tc.fields {
				t.Fatalf("unpacked %q, want %q", got, tc.fields)
			}
			if got := unpackCommentMeta(tc.layout6); got != tc.fields {
				t.Fatalf("unpacked layout 6's %q: %q, want %q", tc.layout6, got, tc.fields)
			}
			for _, m := range []string{tc.packed, tc.layout6} {
				var all [len(commentFields)]string
				unpackCommentFields(all[:], m)
				if got := metaMillis(all[3]); strconv.FormatInt(got, 10) != tc.fields[1] {
					t.Errorf("the loader's read of %q: created %d, want %s", m, got, tc.fields[1])
				}
			}
			names := []string{"depth", "up", "parent", "aname", "author", "created"}
			want := []string{tc.fields[3], "3", tc.fields[0], "Ann", "ann", tc.fields[1]}
			for shape, h := range map[string]map[string]string{
				"packed":           {"m": tc.packed, "up": "3", "n": "Ann"},
				"layout 6":         {"m": tc.layout6, "up": "3", "n": "Ann"},
				"packed, a beside": {"m": tc.packed, "up": "3", "a": "ann", "n": "Ann"},
				"layout 5": {"parent": tc.fields[0], "created": tc.fields[1], "closes": tc.fields[2], "depth": tc.fields[3],
					"ord": tc.fields[4], "up": "3", "author": "ann", "aname": "Ann"},
			} {
				if got := commentValues(names, valuesOf(h, commentArgNames(names...))); !slices.Equal(got, want) {
					t.Errorf("%s: values %q, want %q", shape, got, want)
				}
				all := map[string]string{}
				for k, v := range h {
					all[k] = v
				}
				if got := valuesOf(unpackCommentHash(all), names); !slices.Equal(got, want) {
					t.Errorf("%s: the whole hash unpacked reads %q, want %q", shape, got, want)
				}
			}
		})
	}
	for _, tc := range []struct{ names, args []string }{
		{[]string{"up", "down"}, []string{"up", "down"}},
		{[]string{"author", "deleted"}, []string{"author", "deleted", "m", "a", "n"}},
		{[]string{"closes"}, []string{"closes", "m"}},
		{[]string{"aname", "parent"}, []string{"aname", "parent", "m", "n"}},
	} {
		if got := commentArgNames(tc.names...); !slices.Equal(got, tc.args) {
			t.Errorf("%q asks %q, want %q", tc.names, got, tc.args)
		}
	}
}

// TestCommentFieldSetsPacked: a process of layout 6 asks a comment's hash for the packed field,
// the author and the name, and for none of the fields of layout 5 they hold; one that found an
// earlier layout asks for both.
func TestCommentFieldSetsPacked(t *testing.T) {
	for fs := range AllCommentFields + 1 {
		for _, tc := range []struct {
			name     string
			sets     []commentFieldSet
			unpacked bool
		}{
			{"layout 6", commentFieldSets, false},
			{"before layout 6", unpackedCommentFieldSets, true},
			{"before layout 3", legacyCommentFieldSets, true},
		} {
			set := tc.sets[fs]
			for _, f := range []string{commentMetaField, commentAuthorField, commentNameField} {
				if !slices.Contains(set.args, any(f)) { // n: the author is the name's without a
					t.Errorf("%s: fields %b do not ask for %s (%v)", tc.name, fs, f, set.args)
				}
			}
			if got := slices.Contains(set.args, any("author")); got != tc.unpacked {
				t.Errorf("%s: fields %b ask for author: %v, want %v (%v)", tc.name, fs, got, tc.unpacked, set.args)
			}
		}
	}
}

// TestAuthorNamesOnBothShapes: name_authors gives a comment of either shape its author's name,
// not another author's comment nor a removal marker, and disown takes it off again, the author
// kept; both run twice change nothing more.
func TestAuthorNamesOnBothShapes(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	client := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	defer client.Close()
	s, err := New(ctx, client, Options{Prefix: "x:", WriteLimit: -1, Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	packed, old, gone, other := s.k.comment("7", "000000000001"), s.k.comment("7", "000000000002"),
		s.k.comment("7", "000000000003"), s.k.comment("7", "000000000004")
	for key, fields := range map[string][]any{
		packed: {"m", "0 10 20 0 1", "a", "ann", "up", 0},
		old:    {"parent", "000000000001", "author", "ann", "created", 11, "closes", 21, "depth", 1, "ord", 2, "up", 0},
		gone:   {"author", "ann", "gone", "1"},
		other:  {"m", "0 12 22 0 4", "a", "bob", "up", 0},
	} {
		if err := client.HSet(ctx, key, fields...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(num string) []string {
		t.Helper()
		v, err := s.commentFieldsNow(ctx, "7", num, "author", "aname", "created")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for run := range 2 {
		v, err := s.run(ctx, "name_authors", []string{packed, old, gone, other}, "ann", "Ann", "ann", "Ann", "ann", "Ann", "ann", "Ann")
		if n, _ := v.(int64); err != nil || n != int64(2-2*run) {
			t.Fatalf("run %d named %v (%v), want %d", run, v, err, 2-2*run)
		}
	}
	for num, want := range map[string][]string{"000000000001": {"ann", "Ann", "10"}, "000000000002": {"ann", "Ann", "11"},
		"000000000003": {"ann", "", ""}, "000000000004": {"bob", "", "12"}} {
		if got := read(num); !slices.Equal(got, want) {
			t.Errorf("named: comment %s reads %q, want %q", num, got, want)
		}
	}
	if h, _ := client.HGetAll(ctx, old).Result(); h["m"] != "" || h["aname"] != "Ann" {
		t.Errorf("the comment of layout 5 named is %v, want it of layout 5 still", h)
	}
	if h, _ := client.HGetAll(ctx, packed).Result(); h["m"] != "0 ~a +a 0 1" || h["n"] != "Ann" || len(h) != 3 {
		t.Errorf("the packed comment named is %v, want m (its times written short, as every script writes them), n and up (the author is the name's)", h)
	}
	for _, key := range []string{packed, old, other} {
		for range 2 {
			if _, err := s.run(ctx, "disown", []string{key}, "ann", "anon"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for num, want := range map[string][]string{"000000000001": {"ann", "", "10"}, "000000000002": {"ann", "", "11"},
		"000000000004": {"bob", "", "12"}} {
		if got := read(num); !slices.Equal(got, want) {
			t.Errorf("disowned: comment %s reads %q, want %q", num, got, want)
		}
	}
	if h, _ := client.HGetAll(ctx, packed).Result(); h["a"] != "ann" || h["n"] != "" || len(h) != 3 {
		t.Errorf("the packed comment disowned is %v, want m, a and up", h)
	}
}

// TestNameAuthorsLeavesTombstones: name_authors gives no name to a tombstone of either shape,
// which keeps its author but no name (delete_comment): Rebuild's nameAuthors reads the comments
// before the script runs, and a comment deleted in between must not get its name back.
func TestNameAuthorsLeavesTombstones(t *testing.T) {
	ctx := context.Background()
	s, m := newMiniStore(t)
	packed, old := s.k.comment("7", "000000000001"), s.k.comment("7", "000000000002")
	m.HSet(packed, "m", "0 10 20 0 1", "a", "ann", "up", "0", "replies", "1", "deleted", "1")
	m.HSet(old, "parent", "0", "author", "ann", "created", "11", "closes", "21", "depth", "0", "ord", "2", "replies", "1", "deleted", "1")
	v, err := s.run(ctx, "name_authors", []string{packed, old}, "ann", "Ann", "ann", "Ann")
	if n, _ := v.(int64); err != nil || n != 0 {
		t.Fatalf("named %v (%v), want 0", v, err)
	}
	for _, key := range []string{packed, old} {
		if m.HGet(key, "n") != "" || m.HGet(key, "aname") != "" {
			t.Errorf("tombstone %s named", key)
		}
	}
}
