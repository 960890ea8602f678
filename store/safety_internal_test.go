package store

import (
	"context"
	"testing"

	"github.com/agora/agora/internal/rdb"
	"github.com/alicebob/miniredis/v2"
)

// TestSafetyScriptsAreSafeToRunTwice sends the site filters', new-account limits' and removal
// notices' write scripts twice, as go-redis does when a reply is lost: the second run changes
// nothing.
func TestSafetyScriptsAreSafeToRunTwice(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	rdb := rdb.NewPlainClient(&rdb.Options{Addr: m.Addr()})
	defer rdb.Close()
	s, err := New(ctx, rdb, Options{Prefix: "x:", WriteLimit: -1, Password: PasswordParams{Memory: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	twice := func(name string, keys []string, args ...any) {
		t.Helper()
		for i := range 2 {
			if _, err := s.run(ctx, name, keys, args...); err != nil {
				t.Fatalf("%s run %d: %v", name, i+1, err)
			}
		}
	}
	twice("filters_set", []string{s.k.filters()}, "REFUSE", `["ass"]`, `[]`, "root", 1000)
	if v := rdb.HGet(ctx, s.k.filters(), "v").Val(); v != "1" {
		t.Fatalf("filters version %q after one change sent twice", v)
	}
	if rev := rdb.Get(ctx, s.k.revOf(s.k.filters())).Val(); rev != "1" {
		t.Fatalf("filters revision %q after one change sent twice", rev)
	}
	twice("signup", []string{s.k.user("ann")}, "Ann", "$argon2id$fake", 1000)
	w := s.k.userNewWrites("ann", "posts")
	twice("newaccount", []string{s.k.user("ann"), s.k.karma("ann"), w}, 2000, 86400000, 0, 3, 3600000, "p1", "0")
	if n := rdb.ZCard(ctx, w).Val(); n != 1 {
		t.Fatalf("the new-account window holds %d posts after one sent twice", n)
	}
	twice("modlog_notice", []string{s.k.modLogNotices()}, "rm:1:2", "notification:ann:m:rm:1:2")
	if rev := rdb.Get(ctx, s.k.revOf(s.k.modLogNotices())).Val(); rev != "1" {
		t.Fatalf("modlog revision %q after one link sent twice", rev)
	}
}

func TestFilterMatches(t *testing.T) {
	f := compileFilter([]string{"ass", "buy now", "词语", "kill"}, []string{"spam.example"})
	for _, c := range []struct{ in, want string }{
		{"you ass", "you ***"},
		{"class, assess, bass, ass's", "class, assess, bass, ***'s"},
		{"Ａｓｓ", "***"},
		{"ÁSS!", "***!"},
		{"а\u200bss", "****"},
		{"buy   now", "***   ***"},
		{"buy, then now", "buy, then now"},
		{"这个词语不好", "******"},
		{"go to x.spam.example.", "go to **************."},
		{"spam.examples", "spam.examples"},
		// A host name with invisible characters inside (which IDNA ignores, so a browser goes to
		// the filtered host), and a URL's percent-encoded host (which browsers decode).
		{"go to sp\u00adam.example", "go to *************"},
		{"go to spam.exa\u200bmple!", "go to *************!"},
		{"go to spam.\u200dexample", "go to *************"},
		{"see https://spam%2Eexample/x", "see https://**************/x"},
		{"see HTTPS://user@sp%61m.example:443/x", "see HTTPS://***********************/x"},
		{"see https://ok.example/spam%2Eexample", "see https://ok.example/spam%2Eexample"},
		// Browsers read a link of an http(s) scheme with any slashes and backslashes after its
		// colon, or none, and a link with two of them and no scheme, as naming a host.
		{"see http:spam%2Eexample/x", "see http:**************/x"},
		{"see https:\\\\spam%2Eexample/x", "see https:\\\\**************/x"},
		{"see https:/\\spam%2Eexample/x", "see https:/\\**************/x"},
		{"see https:///spam%2Eexample/x", "see https:///**************/x"},
		{"see [it](//spam%2Eexample/x)", "see [it](//**************/x)"},
		{"see \\\\sp%61m.example", "see \\\\**************"},
		{"a//b and http:ok.example", "a//b and http:ok.example"},
		{"[it](https://spam%2Eexample)", "[it](https://**************)"},
		// Leet spellings: digits and symbols for letters, l and 1 as i.
		{"you a55", "you ***"},
		{"you a$$!", "you ***!"},
		{"4SS", "***"},
		// A number is not a leet spelling, written whole or one digit at a time.
		{"room 455, rated 4, 5, 5", "room 455, rated 4, 5, 5"},
		{"4 s s", "* * *"},
		{"buy n0w", "*** ***"},
		// Spelled one letter at a time: the run whole, never a part of it.
		{"b.u.y now", "***** ***"},
		{"you a s s", "you * * *"},
		{"k-1-l-l it", "******* it"},
		{"a s s e s s", "a s s e s s"},
		{"a. s\ns", "a. s\ns"},
		{"a   s   s", "a   s   s"},
		{"I a s s", "I a s s"},
		{"@ass hello", "@*** hello"},
		{"i h@te it", "i h@te it"},
		{"kill, k1ll, ki11, K!LL", "****, ****, ****, K!LL"},
		{"kiil and skill", "kiil and skill"},
		{"cl4ss, 4ssess", "cl4ss, 4ssess"},
		{"email a@b.co", "email a@b.co"},
		// Invisible letters inside a word (the Hangul fillers) are dropped like zero-width spaces.
		{"a\u3164ss", "****"},
		{"a\uFFA0s\u115Fs \u1160", "***** \u1160"},
		// Enclosed letters (circled, parenthesized, squared, negative) are the letters they enclose.
		{"ⓐⓢⓢ, ⒶⓈⓈ!", "***, ***!"},
		{"⒜⒮⒮ 🄰🅂🅂 🅐🅢🅢 🅰🆂🆂 a🅢s", "*** *** *** *** ***"},
		{"ⓒⓛⓐⓢⓢ, step ① done", "ⓒⓛⓐⓢⓢ, step ① done"},
		// Small capitals, the "small caps" of fancy-text generators, are the letters they show.
		{"ᴋɪʟʟ ᴀꜱꜱ, ʙᴜʏ ɴᴏᴡ", "**** ***, *** ***"},
		{"ᴄʟᴀꜱꜱ ᴀꜱꜱᴇꜱꜱ", "ᴄʟᴀꜱꜱ ᴀꜱꜱᴇꜱꜱ"},
	} {
		if got := mask(c.in, f.matches(c.in)); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		link bool
	}{{"see https://x.example", true}, {"WWW.x.example", true}, {"node.js and e.g.", false}, {"http:/nope", false}} {
		if hasLink(c.in) != c.link {
			t.Errorf("hasLink(%q) = %v", c.in, !c.link)
		}
	}
}
