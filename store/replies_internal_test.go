package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// TestReplyDecoders checks that a reply of the expected shape decodes and any other is an error
// that names the script and wraps ErrBadReply.
func TestReplyDecoders(t *testing.T) {
	for _, tc := range []struct {
		name    string
		decode  func() (any, error)
		want    any
		wantErr bool
	}{
		{"array", func() (any, error) { return replyArray("s", []any{int64(1), "a"}, 2) }, []any{int64(1), "a"}, false},
		{"array longer than needed", func() (any, error) { return replyArray("s", []any{int64(1), "a"}, 1) }, []any{int64(1), "a"}, false},
		{"array too short", func() (any, error) { return replyArray("s", []any{int64(1)}, 2) }, nil, true},
		{"array nil", func() (any, error) { return replyArray("s", nil, 1) }, nil, true},
		{"array of a string", func() (any, error) { return replyArray("s", "a", 0) }, nil, true},
		{"int", func() (any, error) { return replyInt("s", int64(7)) }, int64(7), false},
		{"int of a string", func() (any, error) { return replyInt("s", "7") }, nil, true},
		{"int nil", func() (any, error) { return replyInt("s", nil) }, nil, true},
		{"string", func() (any, error) { return replyString("s", "a") }, "a", false},
		{"string nil", func() (any, error) { return replyString("s", nil) }, nil, true},
		{"hash", func() (any, error) { return replyHash("s", []any{"a", "1", "b", "2"}) }, map[string]string{"a": "1", "b": "2"}, false},
		{"hash empty", func() (any, error) { return replyHash("s", []any{}) }, map[string]string{}, false},
		{"hash odd", func() (any, error) { return replyHash("s", []any{"a", "1", "b"}) }, nil, true},
		{"hash nil", func() (any, error) { return replyHash("s", nil) }, nil, true},
		{"string of an int", func() (any, error) { return replyString("s", int64(1)) }, nil, true},
		{"hash of integer values", func() (any, error) { return replyHash("s", []any{"a", int64(-1)}) }, map[string]string{"a": "-1"}, false},
		{"hash of an integer field", func() (any, error) { return replyHash("s", []any{int64(1), "a"}) }, nil, true},
		{"hash of a nil value", func() (any, error) { return replyHash("s", []any{"a", nil}) }, nil, true},
		{"hash of a nested value", func() (any, error) { return replyHash("s", []any{"a", []any{}}) }, nil, true},
		{"array of a length", func() (any, error) { return replyArrayLen("s", []any{"a", "b"}, 2) }, []any{"a", "b"}, false},
		{"array of another length", func() (any, error) { return replyArrayLen("s", []any{"a", "b"}, 2, 4) }, []any{"a", "b"}, false},
		{"array of no length given", func() (any, error) { return replyArrayLen("s", []any{"a", "b", "c"}, 2, 4) }, nil, true},
		{"array of a length, nil", func() (any, error) { return replyArrayLen("s", nil, 0) }, nil, true},
		{"word", func() (any, error) { return replyWord("s", "pull", "push", "pull") }, "pull", false},
		{"word not in the set", func() (any, error) { return replyWord("s", "sideways", "push", "pull") }, nil, true},
		{"word of an int", func() (any, error) { return replyWord("s", int64(1), "1") }, nil, true},
		{"word empty", func() (any, error) { return replyWord("s", "", "push") }, nil, true},
		{"optional string", func() (any, error) { return replyOptString("s", "a") }, "a", false},
		{"optional string nil", func() (any, error) { return replyOptString("s", nil) }, "", false},
		{"optional string of an int", func() (any, error) { return replyOptString("s", int64(1)) }, nil, true},
		{"strings", func() (any, error) { return replyStrings("s", []any{"a", nil, "c"}, 3) }, []string{"a", "", "c"}, false},
		{"strings of any number", func() (any, error) { return replyStrings("s", []any{"a"}, -1) }, []string{"a"}, false},
		{"strings none", func() (any, error) { return replyStrings("s", []any{}, -1) }, []string{}, false},
		{"strings too few", func() (any, error) { return replyStrings("s", []any{"a"}, 3) }, nil, true},
		{"strings with an int", func() (any, error) { return replyStrings("s", []any{"a", int64(2)}, -1) }, nil, true},
		{"strings of a string", func() (any, error) { return replyStrings("s", "a", -1) }, nil, true},
		{"pairs", func() (any, error) {
			m, sc, err := replyPairs("s", []any{"a", "1", "b", "2"})
			return fmt.Sprint(m, sc), err
		}, "[a b] [1 2]", false},
		{"pairs none", func() (any, error) {
			m, sc, err := replyPairs("s", nil)
			return fmt.Sprint(m, sc), err
		}, "[] []", false},
		{"pairs odd", func() (any, error) { _, _, err := replyPairs("s", []any{"a", "1", "b"}); return nil, err }, nil, true},
		{"pairs of an int score", func() (any, error) { _, _, err := replyPairs("s", []any{"a", int64(1)}); return nil, err }, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.decode()
			if tc.wantErr {
				var re *ReplyError
				if !errors.Is(err, ErrBadReply) || !errors.As(err, &re) || re.Script != "s" || !strings.Contains(err.Error(), "script s") {
					t.Fatalf("error %v; want a ReplyError of script s wrapping ErrBadReply", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v; want %v", got, tc.want)
			}
		})
	}
}

// TestMalformedRepliesFailWrites runs writes whose script is swapped for one that answers in
// another shape, and checks that each fails with a ReplyError naming the script: before the
// checked decoders, a short email_claim reply panicked, a malformed rate-limit reply let the write
// through, a karma reply of strings ranked the author at 0, and a vote's odd hash read as a
// missing post.
func TestMalformedRepliesFailWrites(t *testing.T) {
	for _, tc := range []struct {
		script, body string
		write        func(ctx context.Context, s *Store, post string) error
	}{
		{"email_claim", "return {}", func(ctx context.Context, s *Store, _ string) error {
			return s.claimEmail(ctx, "ann", "ann@example.com")
		}},
		{"ratelimit", "return 'soon'", func(ctx context.Context, s *Store, _ string) error {
			return s.allow(ctx, s.k.userRate("ann"), limit{"writes", 5, time.Minute}, true)
		}},
		{"karma", "return {'a', 'b'}", func(ctx context.Context, s *Store, _ string) error {
			return s.recordKarma(ctx, "ann", "post:1", 1, 1)
		}},
		{"vote_post", "return {1, 'author'}", func(ctx context.Context, s *Store, post string) error {
			_, err := s.VotePost(ctx, "bob", post, 1)
			return err
		}},
		{"delete_post", "return 7", func(ctx context.Context, s *Store, post string) error {
			return s.DeletePost(ctx, "ann", post)
		}},
	} {
		t.Run(tc.script, func(t *testing.T) {
			ctx := context.Background()
			m := miniredis.RunT(t)
			client := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
			t.Cleanup(func() { _ = client.Close() })
			s, err := New(ctx, client, Options{Prefix: "x:", Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range []string{"ann", "bob"} {
				if _, err := s.SignUp(ctx, u, "password "+u); err != nil {
					t.Fatal(err)
				}
			}
			p, err := s.CreatePost(ctx, "ann", NewPost{Title: "t", Body: "b"})
			if err != nil {
				t.Fatal(err)
			}
			s.scripts[tc.script] = rdb.NewScript(tc.body) // the runner loads it on NOSCRIPT
			err = tc.write(ctx, s, p.ID)
			var re *ReplyError
			if !errors.Is(err, ErrBadReply) || !errors.As(err, &re) || re.Script != tc.script {
				t.Fatalf("error %v; want a ReplyError of %s", err, tc.script)
			}
		})
	}
}

// TestMalformedRepliesConverted runs, through their callers, scripts swapped for ones that answer
// in another shape, where the reply used to be decoded by hand: each must fail with a ReplyError
// naming the script. Before the checked decoders, follow read a numeric time with fmt.Sprint, the
// follower's mode, a profile's fields, the registered names, a report's status, the layout's
// version and a session's liveness defaulted to "" or 0, and replay read a missing status as a
// resync.
func TestMalformedRepliesConverted(t *testing.T) {
	for _, tc := range []struct {
		script, body string
		call         func(ctx context.Context, s *Store, post, token string) error
	}{
		{"ban", "return {1, {}, 'x'}", func(ctx context.Context, s *Store, _, _ string) error {
			_, err := s.banStep(ctx, "ban", siteScope, "ann", "bob", time.Now(), 0, "spam")
			return err
		}},
		{"follow", "return {1, 1700000000000, 3}", func(ctx context.Context, s *Store, _, _ string) error {
			_, err := s.followStep(ctx, "ann", "bob", followRead)
			return err
		}},
		{"follower", "return 'sideways'", func(ctx context.Context, s *Store, _, _ string) error {
			_, err := s.mirrorRelation(ctx, []string{s.k.followers("bob"), s.k.followersVer("bob"), s.k.push("bob")}, "ann",
				relation{present: true, at: "1", version: 1}, 10)
			return err
		}},
		{"update_profile", "return {'ann'}", func(ctx context.Context, s *Store, _, _ string) error {
			bio := "hello"
			_, err := s.UpdateProfile(ctx, "ann", ProfileEdit{Bio: &bio})
			return err
		}},
		{"register", "return {1}", func(ctx context.Context, s *Store, _, _ string) error {
			return s.registerNames(ctx, s.k.groups(), true, false, "cats")
		}},
		{"report_write", "return {'maybe'}", func(ctx context.Context, s *Store, post, _ string) error {
			_, err := s.ReportPost(ctx, "bob", post, "spam")
			return err
		}},
		{"replay", "return {}", func(ctx context.Context, s *Store, _, _ string) error {
			_, err := s.ReplayLog(ctx, "posts", "0-0")
			return err
		}},
		{"layout", "return 'six'", func(ctx context.Context, s *Store, _, _ string) error {
			_, err := s.setLayout(ctx, "get", 0, 0)
			return err
		}},
		{"session_touch", "return 'yes'", func(ctx context.Context, s *Store, _, token string) error {
			_, err := s.Authenticate(ctx, token)
			return err
		}},
		{"filters_set", "return {'1', 'refuse'}", func(ctx context.Context, s *Store, _, _ string) error {
			return s.applyFilters("filters_set", []any{"1", "refuse"}, time.Now())
		}},
		{"search_dict_read", "return 'words'", func(ctx context.Context, s *Store, _, _ string) error {
			_, err := s.NewLoader().SearchPosts(ctx, PostSearch{Query: "ti"}, Window{First: 5}, nil)
			return err
		}},
	} {
		t.Run(tc.script, func(t *testing.T) {
			ctx := context.Background()
			m := miniredis.RunT(t)
			client := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
			t.Cleanup(func() { _ = client.Close() })
			s, err := New(ctx, client, Options{Prefix: "x:", Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
			if err != nil {
				t.Fatal(err)
			}
			var token string
			for _, u := range []string{"ann", "bob"} {
				sess, err := s.SignUp(ctx, u, "password "+u)
				if err != nil {
					t.Fatal(err)
				}
				token = sess.Token
			}
			p, err := s.CreatePost(ctx, "ann", NewPost{Title: "t", Body: "b"})
			if err != nil {
				t.Fatal(err)
			}
			s.scripts[tc.script] = rdb.NewScript(tc.body) // the runner loads it on NOSCRIPT
			err = tc.call(ctx, s, p.ID, token)
			var re *ReplyError
			if !errors.Is(err, ErrBadReply) || !errors.As(err, &re) || re.Script != tc.script {
				t.Fatalf("error %v; want a ReplyError of %s", err, tc.script)
			}
		})
	}
}

// TestMalformedRepliesDecoded feeds replies of the wrong shape to the decoding functions of
// page.lua and group_stat.lua, whose replies are read in pipelines, and checks each is a
// ReplyError naming the script, where a wrong type used to read as 0 or "" and an odd trailing
// element was dropped.
func TestMalformedRepliesDecoded(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		decode       func() error
		bad          bool
	}{
		{"page", "page", func() error { _, err := parsePage([]any{int64(2), int64(0), "a", "1", "b", "2"}, false); return err }, false},
		{"page total of a string", "page", func() error { _, err := parsePage([]any{"2", int64(0), "a", "1"}, false); return err }, true},
		{"page odd", "page", func() error { _, err := parsePage([]any{int64(2), int64(0), "a", "1", "b"}, false); return err }, true},
		{"page score of an int", "page", func() error { _, err := parsePage([]any{int64(1), int64(0), "a", int64(1)}, false); return err }, true},
		{"page short", "page", func() error { _, err := parsePage([]any{int64(1)}, false); return err }, true},
		{"windowed page", "page", func() error { _, err := parsePage([]any{int64(2), int64(0), int64(9), "a", "1"}, true); return err }, false},
		{"windowed page backlog of a string", "page", func() error { _, err := parsePage([]any{int64(2), int64(0), "9", "a", "1"}, true); return err }, true},
		{"windowed page short", "page", func() error { _, err := parsePage([]any{int64(2), int64(0)}, true); return err }, true},
		{"group gone", "group_stat", func() error { _, err := decodeGroupStat([]any{int64(3), int64(0)}); return err }, false},
		{"group", "group_stat", func() error {
			_, err := decodeGroupStat([]any{int64(3), int64(1), int64(2), "10", "20", ""})
			return err
		}, false},
		{"group short of its fields", "group_stat", func() error { _, err := decodeGroupStat([]any{int64(3), int64(1), int64(2)}); return err }, true},
		{"group exists of a string", "group_stat", func() error { _, err := decodeGroupStat([]any{int64(3), "1"}); return err }, true},
		{"group members of a string", "group_stat", func() error {
			_, err := decodeGroupStat([]any{int64(3), int64(1), "2", "10", "20", ""})
			return err
		}, true},
		{"group created of an int", "group_stat", func() error {
			_, err := decodeGroupStat([]any{int64(3), int64(1), int64(2), int64(10), "20", ""})
			return err
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode()
			if !tc.bad {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var re *ReplyError
			if !errors.Is(err, ErrBadReply) || !errors.As(err, &re) || re.Script != tc.script {
				t.Fatalf("error %v; want a ReplyError of %s", err, tc.script)
			}
		})
	}
}
