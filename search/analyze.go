// Package search is agora's full-text engine, apart from any store: it turns text into index
// terms, parses what a user types into a query, encodes and decodes posting lists, and ranks the
// documents of decoded lists by BM25. It knows text, not posts: the store decides what a document
// is, where its posting lists live and who may see it.
package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxTermBytes is the longest term the index keeps, in bytes of its normalized form. A longer
// word is cut to it (on a rune boundary), so that a long word still finds itself.
const MaxTermBytes = 48

// fold is the Unicode case folding: "Straße" and "STRASSE" fold alike.
var fold = cases.Fold()

// foldSpecial maps letters that carry their mark inside the letter, which canonical
// decomposition cannot take apart, to what a reader of Latin script types for them.
var foldSpecial = map[rune]string{
	'ø': "o", 'ł': "l", 'đ': "d", 'ħ': "h", 'ı': "i", 'œ': "oe", 'æ': "ae", 'þ': "th", 'ð': "d",
	'ŀ': "l", 'ŧ': "t", 'ƀ': "b", 'ɨ': "i",
}

// Normalize returns s as the index compares it: compatibility-composed (full-width and
// half-width forms become their usual forms, ligatures are split), case-folded, and with the
// accents of Latin, Greek and Cyrillic letters removed ("Café" and "cafe" are one word). Marks of
// other scripts stay: in Japanese the voicing mark makes another syllable, in Devanagari a vowel.
//
// Invisible characters (see Invisible) are dropped first, so that a word stays one word whatever
// shows nothing inside it: "spa\u200bm" is "spam", and a Persian word written with its zero-width
// non-joiner, or a Devanagari one with a zero-width joiner, is the word typed without it. Most
// engines do the same (Unicode's NFKC_Casefold removes these default-ignorable code points).
func Normalize(s string) string {
	if ascii, lower := asciiLower(s); ascii {
		return lower // no composition, case folding or accent applies beyond A-Z
	}
	s = strings.Map(func(r rune) rune { // before NFKC, which turns U+3164 HANGUL FILLER into U+1160
		if Invisible(r) {
			return -1
		}
		return r
	}, s)
	s = norm.NFKC.String(s)
	s = fold.String(s)
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	var base rune
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) {
			if unicode.In(base, unicode.Latin, unicode.Greek, unicode.Cyrillic) {
				continue
			}
			b.WriteRune(r)
			continue
		}
		base = r
		if f, ok := foldSpecial[r]; ok {
			b.WriteString(f)
			continue
		}
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}

// Invisible reports whether r shows nothing and may hide inside a word: the format characters
// (category Cf: zero-width space, zero-width non-joiner and joiner, word joiner, byte order mark,
// soft hyphen, direction marks) and the other default-ignorable code points, among them the
// Hangul fillers, which are letters that render blank, and the variation selectors.
func Invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

// asciiLower reports whether s is ASCII, and if so returns it lower-cased: the common case, in
// which Normalize needs none of its Unicode passes.
func asciiLower(s string) (bool, string) {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return false, ""
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if !upper {
		return true, s
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return true, string(b)
}

// isCJK reports whether r is written without spaces between words: Han ideographs, kana and
// Hangul syllables. Such text is indexed as overlapping pairs of characters (bigrams), the
// usual way to search it without a dictionary.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		r == 'ー' // the katakana length mark is Common script but belongs to the word
}

// isWordRune reports whether r belongs to a word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// isJoiner reports whether r joins the letters around it into one word: an apostrophe
// ("don't" is the word "dont").
func isJoiner(r rune) bool { return r == '\'' || r == '’' }

// Tokens returns the terms of normalized text in order: words of letters and digits, and for
// CJK text each pair of neighbouring characters (a lone character stands for itself). Phrases
// are checked against this sequence, so a query's phrase and a document's text are cut alike.
func Tokens(normalized string) []string {
	var out []string
	for _, sg := range segments(normalized) {
		out = append(out, sg.terms...)
	}
	return out
}

// segment is a run of text cut into terms: one word, or one run of CJK characters (its bigrams).
type segment struct {
	terms []string
	cjk   bool
	end   int // the byte offset just past the segment in the text
}

// segments cuts normalized text into words and CJK runs.
func segments(normalized string) []segment {
	var out []segment
	var word []rune // a word being read, or a CJK run
	cjk := false
	flush := func(end int) {
		if len(word) == 0 {
			return
		}
		sg := segment{cjk: cjk, end: end}
		if cjk {
			if len(word) == 1 {
				sg.terms = []string{string(word)}
			}
			for i := 0; i+1 < len(word); i++ {
				sg.terms = append(sg.terms, string(word[i:i+2]))
			}
		} else {
			sg.terms = []string{clip(string(word))}
		}
		out = append(out, sg)
		word = word[:0]
	}
	for i, r := range normalized {
		switch {
		case isCJK(r):
			if !cjk {
				flush(i)
				cjk = true
			}
			word = append(word, r)
		case isWordRune(r):
			if cjk {
				flush(i)
				cjk = false
			}
			word = append(word, r)
		case isJoiner(r) && !cjk && len(word) > 0 && joinsNext(normalized[i+utf8.RuneLen(r):]):
			// the apostrophe is dropped and the word goes on
		default:
			flush(i)
			cjk = false
		}
	}
	flush(len(normalized))
	return out
}

// joinsNext reports whether rest starts with a letter of a spaced script, which an apostrophe
// before it joins to the word before.
func joinsNext(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return r != utf8.RuneError && isWordRune(r) && !isCJK(r)
}

// clip cuts a term to MaxTermBytes on a rune boundary.
func clip(t string) string {
	if len(t) <= MaxTermBytes {
		return t
	}
	n := MaxTermBytes
	for n > 0 && !utf8.RuneStart(t[n]) {
		n--
	}
	return t[:n]
}

// Analyze returns the terms of raw text: Tokens(Normalize(text)).
func Analyze(text string) []string { return Tokens(Normalize(text)) }
