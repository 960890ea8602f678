package store

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agora/agora/search"
)

// The site filters (sitefilters.go) compare words as a reader sees them, not as they are typed:
// each word of a text and of a filter is compared by its skeleton — the search index's
// normalization (compatibility forms, so full-width and mathematical letters become plain ones;
// case folding; Latin, Greek and Cyrillic accents removed), then the letters of other scripts
// that look like Latin ones (Cyrillic "а", Greek "ο") and the Latin small capitals ("ᴀ", "ꜱ")
// mapped to them, with invisible characters
// (zero-width spaces and joiners, soft hyphens, the blank Hangul fillers: every default-ignorable
// code point) dropped; enclosed letters (ⓐ, ⒜, 🄰, 🅐, 🅰) are the letters they enclose. A filter matches whole words
// only: "ass" refuses "ass" and "Аss" but not "class" or "assess". A filter of several words
// matches them in a row, whatever separates them. A filter in a script written without spaces
// (Chinese, Japanese, Korean) matches anywhere inside a run of that script.
//
// Words spelled with digits and symbols for letters ("a55", "h@te", "sh1t", "k1ll") are compared a
// second way, by their leet skeleton: the skeleton with 0→o, 1→i, 3→e, 4→a, 5→s, 7→t, 8→b, 9→g,
// @→a and $→s, and l folded into i (so that "ki11" meets "kill"). A filter matches there only
// where a word of the text holds such a digit or symbol, so plain words are never folded: "kiil"
// is not "kill"; nor are numbers, digits alone ("room 455", "4, 5, 5"). "@" and "$" belong to a word only after a letter or digit, so a mention
// ("@alice") is still the word "alice".
//
// Words spelled one letter at a time ("s l u r", "s.l.u.r", "s-l-u-r", "sh 1 t") are compared a
// third way: a run of two or more one-character words parted only by short separators (at most
// two characters, no line break) is joined into one word, compared like any other word and as
// the first word of a phrase ("b.u.y now"). The run is taken whole, so a spelled word still
// matches whole words only ("a s s e s s" is "assess", not "ass"); a one-letter word written just
// before it joins the run too ("I a s s" is "iass"), which is the price of not guessing where a
// spelled word starts.

// confusables maps lower-case letters of Cyrillic and Greek that readers take for Latin ones.
var confusables = map[rune]rune{
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c',
	'т': 't', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'һ': 'h', 'ԁ': 'd', 'ԛ': 'q',
	'ԝ': 'w', 'ɑ': 'a', 'ɡ': 'g', 'α': 'a', 'ο': 'o', 'ρ': 'p', 'ι': 'i', 'κ': 'k', 'ν': 'v',
	'τ': 't', 'υ': 'u', 'χ': 'x', 'ε': 'e', 'ѵ': 'v', 'ӏ': 'l',
	// The Latin small capitals: the "small caps" of fancy-text generators, which NFKC keeps.
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ꜰ': 'f', 'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i',
	'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's',
	'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z',
}

// enclosedLetter returns the Latin letter (lower case) that r encloses — circled (ⓐ, Ⓐ),
// parenthesized (⒜, 🄐), squared (🄰) and negative circled or squared (🅐, 🅰) — and whether
// it is one. These are symbols, not letters, so a word would end at them; and NFKC folds only
// some of them, the parenthesized ones into "(a)".
func enclosedLetter(r rune) (rune, bool) {
	for _, b := range enclosedBlocks {
		if r >= b && r < b+26 {
			return 'a' + r - b, true
		}
	}
	return 0, false
}

// enclosedBlocks are the first runes (A or a) of the runs of 26 enclosed Latin letters.
var enclosedBlocks = []rune{0x249C, 0x24B6, 0x24D0, 0x1F110, 0x1F130, 0x1F150, 0x1F170}

// skeleton returns the form in which a word is compared (see above).
func skeleton(word string) string {
	n := search.Normalize(strings.Map(func(r rune) rune {
		if c, ok := enclosedLetter(r); ok {
			return c
		}
		if search.Invisible(r) { // before NFKC, which turns U+3164 HANGUL FILLER into U+1160
			return -1
		}
		return r
	}, word))
	return strings.Map(func(r rune) rune {
		if c, ok := confusables[r]; ok {
			return c
		}
		if search.Invisible(r) {
			return -1
		}
		return r
	}, n)
}

// textWord is one word of a text: its bytes [start, end) in the text, its skeleton, and its leet
// skeleton where it holds digits or symbols standing for letters (leet, "" otherwise).
type textWord struct {
	start, end int
	skel       string
	leet       string
	cjk        bool
}

// leetLetters maps the digits and symbols that stand for letters to those letters.
var leetLetters = map[rune]rune{
	'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '9': 'g', '@': 'a', '$': 's',
}

// isLeetRune reports whether r stands for a letter in a leet spelling.
func isLeetRune(r rune) bool {
	_, ok := leetLetters[r]
	return ok
}

// leetSkeleton returns the leet skeleton of a word (see above).
func leetSkeleton(word string) string {
	s := skeleton(strings.Map(func(r rune) rune {
		if c, ok := leetLetters[r]; ok {
			return c
		}
		return r
	}, word))
	return strings.ReplaceAll(s, "l", "i")
}

// leetOf returns the leet skeleton of a word of a text when it is spelled with digits or symbols
// for letters, else "": it holds one of them, and is not a number (digits alone, "455", are read
// as a number, not as "ass").
func leetOf(word string) string {
	if strings.IndexFunc(word, isLeetRune) < 0 || strings.IndexFunc(word, func(r rune) bool { return !unicode.IsDigit(r) }) < 0 {
		return ""
	}
	return leetSkeleton(word)
}

// filterWordRune reports whether r belongs to a word of a filtered text: letters, digits, marks
// and enclosed letters, and the invisible characters that may hide inside a word.
func filterWordRune(r rune) bool {
	if _, ok := enclosedLetter(r); ok {
		return true
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) ||
		unicode.Is(unicode.Mc, r) || search.Invisible(r)
}

// isCJKRune reports whether r belongs to a script written without spaces between words.
func isCJKRune(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// textWords cuts text into its words: runs of word characters. An apostrophe separates words, so
// that a filtered word is found in its possessive ("ass's").
func textWords(text string) []textWord {
	var out []textWord
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := text[start:end]
		tw := textWord{start: start, end: end, skel: skeleton(w), cjk: strings.IndexFunc(w, isCJKRune) >= 0}
		if !tw.cjk {
			tw.leet = leetOf(w)
		}
		out = append(out, tw)
		start = -1
	}
	for i, r := range text {
		switch {
		case filterWordRune(r):
			if start < 0 {
				start = i
			}
		case (r == '@' || r == '$') && start >= 0:
			// inside a word or ending it ("h@te", "a$$"); a mention's "@" starts no word
		default:
			flush(i)
		}
	}
	flush(len(text))
	return out
}

// wordFilter is a compiled list of filtered words and domains.
type wordFilter struct {
	phrases map[string][][]string // a phrase's first word's skeleton → the skeletons of each phrase
	leet    map[string][][]string // the same by leet skeletons
	cjk     []string              // skeletons of filters in scripts without spaces
	domains []string              // lower-case host names
}

// compileFilter compiles words and domains as normalized by normalizeFilterWords and
// normalizeFilterDomains.
func compileFilter(words, domains []string) *wordFilter {
	f := &wordFilter{phrases: map[string][][]string{}, leet: map[string][][]string{}, domains: domains}
	for _, w := range words {
		tw := textWords(w)
		if len(tw) == 0 {
			continue
		}
		if len(tw) == 1 && tw[0].cjk {
			f.cjk = append(f.cjk, tw[0].skel)
			continue
		}
		skels, leets := make([]string, len(tw)), make([]string, len(tw))
		for i, x := range tw {
			skels[i], leets[i] = x.skel, leetSkeleton(w[x.start:x.end])
		}
		f.phrases[skels[0]] = append(f.phrases[skels[0]], skels)
		f.leet[leets[0]] = append(f.leet[leets[0]], leets)
	}
	return f
}

// empty reports whether the filter filters nothing.
func (f *wordFilter) empty() bool {
	return f == nil || len(f.phrases) == 0 && len(f.cjk) == 0 && len(f.domains) == 0
}

// textSpan is a matched part of a text, in bytes.
type textSpan struct{ start, end int }

// matches returns the parts of text that the filter matches: filtered words and phrases, and host
// names on a filtered domain or under one.
func (f *wordFilter) matches(text string) []textSpan {
	if f.empty() || text == "" {
		return nil
	}
	var out []textSpan
	words := textWords(text)
	for i, w := range words {
		if w.cjk {
			for _, c := range f.cjk {
				if strings.Contains(w.skel, c) {
					out = append(out, textSpan{w.start, w.end})
					break
				}
			}
		}
		if n := f.phraseAt(words, i); n > 0 {
			out = append(out, textSpan{w.start, words[i+n-1].end})
		}
	}
	for i := 0; i < len(words); {
		j := spelledRun(text, words, i)
		if j-i < 2 {
			i++
			continue
		}
		// The run as one word, followed by the words after it, for the phrases it may begin.
		joined := spelledWord(text, words[i:j])
		rest := append([]textWord{joined}, words[j:]...)
		if n := f.phraseAt(rest, 0); n > 0 {
			out = append(out, textSpan{joined.start, rest[n-1].end})
		}
		i = j
	}
	if len(f.domains) > 0 {
		for _, m := range hostPattern.FindAllStringIndex(text, -1) {
			if f.blocksHost(text[m[0]:m[1]]) {
				out = append(out, textSpan{m[0], m[1]})
			}
		}
		for _, m := range authorityPattern.FindAllStringSubmatchIndex(text, -1) {
			if h, ok := authorityHost(text[m[2]:m[3]]); ok && f.blocksHost(h) {
				out = append(out, textSpan{m[2], m[3]})
			}
		}
	}
	return out
}

// spelledRun returns the end of the run of one-character words that starts at words[i] (see
// above): j such that words[i:j] are one character each, parted by at most two characters and no
// line break. j is i when words[i] is longer or in a script written without spaces.
func spelledRun(text string, words []textWord, i int) int {
	one := func(w textWord) bool {
		return !w.cjk && utf8.RuneCountInString(text[w.start:w.end]) == 1
	}
	j := i
	for j < len(words) && one(words[j]) {
		if j > i {
			gap := text[words[j-1].end:words[j].start]
			if utf8.RuneCountInString(gap) > 2 || strings.ContainsAny(gap, "\n\r") {
				break
			}
		}
		j++
	}
	return j
}

// spelledWord joins a run of one-character words into the word they spell.
func spelledWord(text string, run []textWord) textWord {
	var b strings.Builder
	for _, w := range run {
		b.WriteString(text[w.start:w.end])
	}
	word := b.String()
	tw := textWord{start: run[0].start, end: run[len(run)-1].end, skel: skeleton(word)}
	tw.leet = leetOf(word)
	return tw
}

// phraseAt returns the number of words of a filtered phrase that starts at words[i], or 0: a
// phrase whose skeletons the words have, or whose leet skeletons they have where one of them is
// spelled with digits or symbols.
func (f *wordFilter) phraseAt(words []textWord, i int) int {
	if n := phraseIn(f.phrases[words[i].skel], words[i:], func(w textWord) string { return w.skel }); n > 0 {
		return n
	}
	rest := words[i:]
	lk := func(w textWord) string {
		if w.leet != "" {
			return w.leet
		}
		return strings.ReplaceAll(w.skel, "l", "i")
	}
	for _, p := range f.leet[lk(words[i])] {
		if len(p) > len(rest) || !slices.ContainsFunc(rest[:len(p)], func(w textWord) bool { return w.leet != "" }) {
			continue
		}
		if n := phraseIn([][]string{p}, rest, lk); n > 0 {
			return n
		}
	}
	return 0
}

// phraseIn returns the length of the first of phrases that words begin with, compared by key, or 0.
func phraseIn(phrases [][]string, words []textWord, key func(textWord) string) int {
	for _, p := range phrases {
		if len(p) > len(words) {
			continue
		}
		ok := true
		for j := 1; j < len(p); j++ {
			if key(words[j]) != p[j] {
				ok = false
				break
			}
		}
		if ok {
			return len(p)
		}
	}
	return 0
}

// hostPattern finds host names in text: labels of letters, digits and hyphens joined by dots
// (full-width and ideographic ones too), ending in a label of two letters or more. Marks and
// invisible characters (format characters: soft hyphens, zero-width spaces and joiners) belong to
// a label wherever they stand: IDNA maps them to nothing or rejects them, so "sp\u00adam.example"
// takes a browser to spam.example, and the skeleton drops them (normalHost).
var hostPattern = regexp.MustCompile(`(?:[\p{L}\p{N}\p{M}\p{Cf}-]+[.．。｡])+[\p{M}\p{Cf}]*(?:\p{L}[\p{M}\p{Cf}]*){2,}`)

// authorityPattern finds the authority of each http(s) URL in text (group 1): what follows
// "http:" or "https:" and any slashes or backslashes, or two or more of them without a scheme (a
// link relative to the page's scheme), up to the path, query, fragment, white space or a
// character that ends a link in markup. A browser reads all of these as naming a host
// ("https:\\spam.example", "http:spam.example" from an https page, "//spam.example") and
// percent-decodes it ("https://spam%2Eexample"), which hostPattern cannot see; authorityHost
// decodes it.
var authorityPattern = regexp.MustCompile(`(?i)(?:\bhttps?:[/\\]*|[/\\]{2,})([^\s/?#\\()<>"'\[\]|^]+)`)

// authorityHost returns the host of a URL's authority as a browser reads it: after any user
// information, without the port, percent-decoded; false when it cannot be decoded.
func authorityHost(auth string) (string, bool) {
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && !strings.Contains(auth[i:], "]") {
		auth = auth[:i]
	}
	h, err := url.PathUnescape(auth)
	if err != nil || h == "" {
		return "", false
	}
	return h, true
}

// normalHost returns a host name as the domain filter compares it: compatibility-composed,
// lower-cased, with ideographic dots as dots and no trailing dot.
func normalHost(h string) string {
	h = strings.NewReplacer("。", ".", "｡", ".", "．", ".").Replace(h)
	return strings.TrimSuffix(skeletonHost(h), ".")
}

// skeletonHost is skeleton applied label by label, keeping the dots and hyphens.
func skeletonHost(h string) string {
	labels := strings.Split(h, ".")
	for i, l := range labels {
		parts := strings.Split(l, "-")
		for j, p := range parts {
			parts[j] = skeleton(p)
		}
		labels[i] = strings.Join(parts, "-")
	}
	return strings.Join(labels, ".")
}

// blocksHost reports whether host is a filtered domain or under one.
func (f *wordFilter) blocksHost(host string) bool {
	if f == nil {
		return false
	}
	h := normalHost(host)
	for _, d := range f.domains {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

// mask returns text with every rune of the spans but white space replaced by an asterisk.
func mask(text string, spans []textSpan) string {
	if len(spans) == 0 {
		return text
	}
	masked := make([]bool, len(text))
	for _, s := range spans {
		for i := s.start; i < s.end; i++ {
			masked[i] = true
		}
	}
	var b strings.Builder
	b.Grow(len(text))
	for i, r := range text {
		if masked[i] && !unicode.IsSpace(r) {
			b.WriteByte('*')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// linkPattern finds links in text: an http or https URL, or a host name starting with www.
var linkPattern = regexp.MustCompile(`(?i)\bhttps?://|\bwww\.[\p{L}\p{N}-]+\.`)

// hasLink reports whether text holds a link (see linkPattern).
func hasLink(text string) bool { return linkPattern.MatchString(text) }
