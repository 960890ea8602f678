package search

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Café", "cafe"},
		{"CAFÉ", "cafe"},
		{"ｆｕｌｌｗｉｄｔｈ ＡＢＣ１２３", "fullwidth abc123"},
		{"Straße", "strasse"},
		{"Øresund Łódź", "oresund lodz"},
		{"ﬁle", "file"},      // a ligature is split
		{"Ἀθῆναι", "αθηναι"}, // Greek accents go
		{"ёлка", "елка"},     // so do Cyrillic ones
		{"が", "が"},           // the Japanese voicing mark stays
		{"ｶﾞｷﾞ", "ガギ"},       // half-width katakana become full-width
		{"नमस्ते", "नमस्ते"}, // Devanagari keeps its marks
		{"e\u0301", "e"},     // a combining accent on a Latin letter goes
	} {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Hello, world!", []string{"hello", "world"}},
		{"don't stop", []string{"dont", "stop"}},
		{"it's 'quoted'", []string{"its", "quoted"}},
		{"go1.26 is out", []string{"go1", "26", "is", "out"}},
		{"Redis的数据结构", []string{"redis", "的数", "数据", "据结", "结构"}},
		{"我 爱", []string{"我", "爱"}},
		{"東京タワー", []string{"東京", "京タ", "タワ", "ワー"}},
		{"한국어 검색", []string{"한국", "국어", "검색"}},
		{strings.Repeat("a", 100), []string{strings.Repeat("a", MaxTermBytes)}},
	} {
		if got := Analyze(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Analyze(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestInvisibleCharactersJoinWords checks that a character that shows nothing never cuts a word
// in two, in a text or in a query, and that the word is the one typed without it: zero-width
// space, non-joiner and joiner, word joiner, byte order mark and soft hyphen alike. A Persian word
// written with its zero-width non-joiner and a Devanagari one with a zero-width joiner stay one
// word each.
func TestInvisibleCharactersJoinWords(t *testing.T) {
	for _, tc := range []struct{ in, plain string }{
		{"spa\u200bm", "spam"},
		{"spa\u200cm", "spam"},
		{"spa\u200dm", "spam"},
		{"spa\u2060m", "spam"},
		{"spa\ufeffm", "spam"},
		{"spa\u00adm", "spam"},
		{"Ca\u200bfé", "cafe"},
		{"\u200bredis\u200b", "redis"},
		{"\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645"}, // Persian: mi-khaham
		{"\u0915\u094d\u200d\u0937", "\u0915\u094d\u0937"},                                                 // Devanagari: ksha with a joiner
	} {
		want := Analyze(tc.plain)
		if len(want) != 1 {
			t.Fatalf("Analyze(%q) = %q, want one word", tc.plain, want)
		}
		if got := Analyze(tc.in); !reflect.DeepEqual(got, want) {
			t.Errorf("Analyze(%q) = %q, want %q", tc.in, got, want)
		}
		q, err := Parse(tc.in)
		if err != nil || q.Prefix != want[0] || len(q.Terms) != 0 {
			t.Errorf("Parse(%q) = %#v, %v; want the prefix %q alone", tc.in, q, err, want[0])
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Query
	}{
		{"redis", Query{Prefix: "redis"}},
		{"redis ", Query{Terms: []string{"redis"}}},
		{"Redis Sorted se", Query{Terms: []string{"redis", "sorted"}, Prefix: "se"}},
		{"redis s", Query{Terms: []string{"redis", "s"}}},
		{`"sorted set" redis`, Query{Terms: []string{"set", "sorted"}, Prefix: "redis", Phrases: [][]string{{"sorted", "set"}}}},
		{`redis "sorted set`, Query{Terms: []string{"redis", "set", "sorted"}, Phrases: [][]string{{"sorted", "set"}}}},
		{`redis “sorted set”`, Query{Terms: []string{"redis", "set", "sorted"}, Phrases: [][]string{{"sorted", "set"}}}},
		{"数据结构", Query{Terms: []string{"据结", "数据", "结构"}, Phrases: [][]string{{"数据", "据结", "结构"}}}},
		{"Café au", Query{Terms: []string{"cafe"}, Prefix: "au"}},
		{"go go", Query{Terms: []string{"go"}, Prefix: "go"}},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"", "   ", `"" ,,`, strings.Repeat("x", MaxQueryRunes+1), "a b c d e f g h i j", "\xff"} {
		if _, err := Parse(bad); !errors.Is(err, ErrQuery) {
			t.Errorf("Parse(%q) = %v, want ErrQuery", bad, err)
		}
	}
}

func TestMatch(t *testing.T) {
	doc := func(fields ...string) []string {
		var fs []Field
		for _, f := range fields {
			fs = append(fs, Field{Text: f, Weight: 1, AvgLen: 10})
		}
		_, tokens := Impacts(fs)
		return tokens
	}
	title, body := "Sorted sets in Redis", "Redis 的数据结构: a sorted set keeps scores. Café crème."
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{"redis", true},
		{"REDIS sorted", true},
		{"redis sor", true},       // the last word is a prefix
		{"redis sor ", false},     // unless a space ends it
		{`"sorted set"`, true},    // a phrase in the body
		{`"set sorted"`, false},   // not in this order
		{`"redis redis"`, false},  // nor across fields
		{"cafe creme", true},      // accents fold
		{"ＲＥＤＩＳ", true},           // full width folds
		{"数据结构", true},            // CJK as a phrase
		{"数据构", false},            // not a run of the text
		{"redis postgres", false}, // every term must match
	} {
		q, err := Parse(tc.q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.q, err)
		}
		if got := q.Match(doc(title, body)); got != tc.want {
			t.Errorf("%q matches = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// A phrase is found in time linear in the document's length: a run of one repeated term, whose
// every start matches up to its last term (199 CJK pairs of "中" and a "中文" against a long run of
// "中"), compares each token a bounded number of times, not once per term of the phrase.
func TestIndexRunIsLinear(t *testing.T) {
	rep := func(t string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = t
		}
		return out
	}
	long := append([]string{"中文"}, rep("中中", 40_000)...)
	for _, tc := range []struct {
		name        string
		tokens, run []string
		want        int
	}{
		{"no match, every start nearly", long, append(rep("中中", 198), "中文"), -1},
		{"match at the end", append(rep("a", 5_000), "b"), append(rep("a", 100), "b"), 4_900},
		{"match at the start", []string{"sorted", "set", "keeps"}, []string{"sorted", "set"}, 0},
		{"overlapping starts", []string{"a", "a", "b", "a", "a", "a", "b"}, []string{"a", "a", "a", "b"}, 3},
		{"run longer than the text", []string{"a"}, []string{"a", "a"}, -1},
		{"empty run", []string{"a"}, nil, 0},
	} {
		at, steps := indexRun(tc.tokens, tc.run)
		if at != tc.want {
			t.Errorf("%s: at %d, want %d", tc.name, at, tc.want)
		}
		if limit := 2*len(tc.tokens) + 2*len(tc.run); steps > limit {
			t.Errorf("%s: %d comparisons for %d tokens and a run of %d, want at most %d", tc.name, steps, len(tc.tokens), len(tc.run), limit)
		}
	}
}

func TestCodecRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		c    Codec
		docs []Doc
	}{
		{Number, []Doc{{A: 1}, {A: 300}, {A: 1 << 40}}},
		{Pair, []Doc{{A: 1, B: 2}, {A: 1, B: 300}, {A: 70000, B: 1}}},
		{Text, []Doc{{S: "alice"}, {S: "bob"}, {S: "ü-grp"}}},
	} {
		var list []byte
		var want []Posting
		for i, d := range tc.docs {
			p := Posting{Doc: d, Impact: uint8(10 + i)}
			list = tc.c.Append(list, p)
			want = append(want, p)
		}
		// Indexed again: the last posting of a document counts, and the list stays sorted.
		list = tc.c.Append(list, Posting{Doc: tc.docs[0], Impact: 99})
		want[0].Impact = 99
		got, err := tc.c.Decode(nil, list)
		if err != nil {
			t.Fatalf("%v: %v", tc.c, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: decoded %v, want %v", tc.c, got, want)
		}
		if _, err := tc.c.Decode(nil, list[:len(list)-1]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v: a cut list decoded without ErrCorrupt: %v", tc.c, err)
		}
	}
}

func TestRelevance(t *testing.T) {
	// Three posts about redis: the title match outranks the body match, and the short body
	// outranks the long one.
	docs := []struct {
		title, body string
	}{
		{"Redis streams", "consumer groups and acknowledgements"},
		{"Postgres", "we tried redis once " + strings.Repeat("filler words here ", 30)},
		{"Caching", "redis"},
		{"Unrelated", "nothing to see"},
	}
	lists := map[string][]byte{}
	for i, d := range docs {
		imp, _ := Impacts([]Field{{Text: d.title, Weight: 3, AvgLen: 5}, {Text: d.body, Weight: 1, AvgLen: 40}})
		for term, w := range imp {
			lists[term] = Number.Append(lists[term], Posting{Doc: Doc{A: uint64(i + 1)}, Impact: w})
		}
	}
	ps, _ := Number.Decode(nil, lists["redis"])
	hits := Match([][]Posting{ps}, nil, len(docs))

	page, more := Best(hits, nil, nil, 10, false)
	var order []uint64
	for _, h := range page {
		order = append(order, h.Doc.A)
	}
	if want := []uint64{1, 3, 2}; !slices.Equal(order, want) || more {
		t.Fatalf("order %v (more %v), want %v", order, more, want)
	}
}

func TestMatchIntersectsAndPrefixes(t *testing.T) {
	mk := func(ids ...uint64) []Posting {
		var ps []Posting
		for _, id := range ids {
			ps = append(ps, Posting{Doc: Doc{A: id}, Impact: 100})
		}
		return ps
	}
	hits := Match([][]Posting{mk(1, 2, 3, 5, 8, 13, 21), mk(2, 3, 5, 7, 11, 13)}, &Prefix{Lists: [][]Posting{mk(3, 4), mk(13, 14)}, Exact: -1}, 100)
	var got []uint64
	for _, h := range hits {
		got = append(got, h.Doc.A)
	}
	if want := []uint64{3, 13}; !slices.Equal(got, want) {
		t.Fatalf("hits %v, want %v", got, want)
	}
	if hits := Match(nil, nil, 10); hits != nil {
		t.Fatalf("no terms matched %v", hits)
	}
	if hits := Match(nil, &Prefix{Exact: -1}, 10); len(hits) != 0 {
		t.Fatalf("a prefix that expands to nothing matched %v", hits)
	}
}

func TestBestPagesBothWays(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var hits []Hit
	for i := range 500 {
		hits = append(hits, Hit{Doc: Doc{A: uint64(i)}, Score: float64(r.IntN(20))})
	}
	all := slices.Clone(hits)
	slices.SortFunc(all, func(a, b Hit) int {
		if Before(a, b) {
			return -1
		}
		return 1
	})
	// Forward pages of 7 cover the whole order once.
	var walked []Hit
	var after *Hit
	for {
		page, more := Best(hits, after, nil, 7, false)
		walked = append(walked, page...)
		if !more {
			break
		}
		after = &page[len(page)-1]
	}
	if !slices.Equal(walked, all) {
		t.Fatal("forward paging did not walk the rank order")
	}
	// Backward pages from the end cover it too.
	var back []Hit
	var before *Hit
	for {
		page, more := Best(hits, nil, before, 7, true)
		back = append(slices.Clone(page), back...)
		if !more {
			break
		}
		before = &page[0]
	}
	if !slices.Equal(back, all) {
		t.Fatal("backward paging did not walk the rank order")
	}
}

// The word typed outranks a rarer longer word that it prefixes: the prefix counts as one term.
func TestPrefixPrefersTheWordTyped(t *testing.T) {
	docs := []struct{ title, body string }{
		{"Miciza biwi", "a post about both words"},
		{"Other", "miciza and biwizaf in the body"},
		{"Another", "miciza biwizafo"},
	}
	for i := range 20 { // "biwi" is common, "biwizaf" rare
		docs = append(docs, struct{ title, body string }{"filler", "biwi " + strings.Repeat("x ", i)})
	}
	lists := map[string][]byte{}
	for i, d := range docs {
		imp, _ := Impacts([]Field{{Text: d.title, Weight: 3, AvgLen: 5}, {Text: d.body, Weight: 1, AvgLen: 40}})
		for term, w := range imp {
			lists[term] = Number.Append(lists[term], Posting{Doc: Doc{A: uint64(i + 1)}, Impact: w})
		}
	}
	dec := func(term string) []Posting {
		ps, err := Number.Decode(nil, lists[term])
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	prefix := &Prefix{Lists: [][]Posting{dec("biwi"), dec("biwizaf"), dec("biwizafo")}, Exact: 0}
	page, _ := Best(Match([][]Posting{dec("miciza")}, prefix, len(docs)), nil, nil, 3, false)
	if len(page) == 0 || page[0].Doc.A != 1 {
		t.Fatalf("first %v, want the post whose title has both words", page)
	}
}

// Impacts is BM25F with each field normalized by its own length: a title's word is not buried by
// a long body, and one field alone is plain BM25.
func TestImpacts(t *testing.T) {
	filler := strings.Repeat("filler words here ", 40)
	post := func(title, body string) []Field {
		return []Field{{Text: title, Weight: 3, AvgLen: 8}, {Text: body, Weight: 1, AvgLen: 75}}
	}
	impact := func(fs []Field, term string) uint8 {
		imp, _ := Impacts(fs)
		return imp[term]
	}
	// bm25 is the classic term-frequency component of BM25, over its bound k1+1, scaled to 255.
	bm25 := func(tf, dl, avgdl float64) uint8 {
		w := tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avgdl)) / (k1 + 1)
		return uint8(math.Round(w * 255))
	}
	for _, tc := range []struct {
		name          string
		higher, lower []Field // the term weighs more in higher, unless equal
		term          string
		equal         bool
	}{
		{"a title's word whatever the body's length", post("redis streams", "short"), post("redis streams", filler), "redis", true},
		{"a shorter title", post("redis streams", filler), post("redis streams and consumer groups explained here", "short"), "redis", false},
		{"in the title and the body", post("redis streams", "about redis"), post("redis streams", "about it"), "redis", false},
		{"in the title, not the body", post("redis streams", "short"), post("streams", "redis is short"), "redis", false},
		{"a shorter body", post("streams", "redis is short"), post("streams", "redis "+filler), "redis", false},
		{"an unweighted length", []Field{{Text: "redis " + filler, Weight: 1}}, []Field{{Text: "redis", Weight: 1}}, "redis", true},
	} {
		hi, lo := impact(tc.higher, tc.term), impact(tc.lower, tc.term)
		switch {
		case lo == 0:
			t.Errorf("%s: no impact for %q", tc.name, tc.term)
		case tc.equal && hi != lo:
			t.Errorf("%s: impacts %d and %d, want them equal", tc.name, hi, lo)
		case !tc.equal && hi <= lo:
			t.Errorf("%s: impact %d, not above %d", tc.name, hi, lo)
		}
	}
	// One field is BM25: "redis" twice in 20 terms, against 10 usual.
	text := "redis redis " + strings.Repeat("x ", 18)
	if got, want := impact([]Field{{Text: text, Weight: 1, AvgLen: 10}}, "redis"), bm25(2, 20, 10); got != want {
		t.Errorf("one field: impact %d, want BM25's %d", got, want)
	}

	// Two posts with the query's words in their titles: the shorter title ranks first, however long
	// its body (a single length for the whole post would rank the short body first).
	docs := [][]Field{post("diza tafeka", filler+filler), post("diza wugi tafeka", "short")}
	lists := map[string][]Posting{}
	for i, fs := range docs {
		imp, _ := Impacts(fs)
		for term, w := range imp {
			lists[term] = append(lists[term], Posting{Doc: Doc{A: uint64(i + 1)}, Impact: w})
		}
	}
	page, _ := Best(Match([][]Posting{lists["diza"], lists["tafeka"]}, nil, 100), nil, nil, 2, false)
	if len(page) != 2 || page[0].Doc.A != 1 {
		t.Errorf("ranked %v, want post 1 first", page)
	}
}
