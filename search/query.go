package search

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits of a query, so that its cost has a ceiling.
const (
	// MaxQueryRunes is the longest query accepted, in characters.
	MaxQueryRunes = 200
	// MaxQueryTerms is how many distinct terms (words, CJK pairs, the prefix) a query may hold.
	MaxQueryTerms = 8
	// MinPrefixRunes is the shortest last word that also matches as a prefix: a single letter
	// would stand for a large part of the vocabulary.
	MinPrefixRunes = 2
)

// ErrQuery is the error of a query that cannot be searched; the message says why.
var ErrQuery = errors.New("invalid search query")

// Query is a parsed search: every term must be in a document, the prefix (if any) must start one
// of its terms, and each phrase must appear in its text as consecutive terms.
type Query struct {
	// Terms are the words that must all match exactly, distinct and sorted.
	Terms []string
	// Prefix is the last word as typed so far: a document matches it with any term that starts
	// with it (the word itself included). Empty when the query ends with a space, a quote or CJK
	// text, or when the word is shorter than MinPrefixRunes (it is then one of Terms).
	Prefix string
	// Phrases are runs of terms that must appear in this order with nothing between them: the
	// quoted parts of the query, and every CJK run of three or more characters.
	Phrases [][]string
}

// Parse parses what a user typed. Words are matched after Normalize; text in double quotes
// (straight or curly) is a phrase; an unclosed quote runs to the end.
func Parse(raw string) (Query, error) {
	if !utf8.ValidString(raw) {
		return Query{}, fmt.Errorf("%w: not valid UTF-8", ErrQuery)
	}
	if n := utf8.RuneCountInString(raw); n > MaxQueryRunes {
		return Query{}, fmt.Errorf("%w: %d characters, at most %d", ErrQuery, n, MaxQueryRunes)
	}
	text := Normalize(raw)
	var q Query
	terms := map[string]bool{}
	quoted := false
	rest := text
	lastWord := "" // the last unquoted word when it ends the query, a prefix candidate
	for len(rest) > 0 {
		i := strings.IndexAny(rest, "\"“”„")
		part := rest
		if i >= 0 {
			part = rest[:i]
		}
		segs := segments(part)
		var run []string
		for _, sg := range segs {
			for _, t := range sg.terms {
				terms[t] = true
			}
			run = append(run, sg.terms...)
			if !quoted && sg.cjk && len(sg.terms) > 1 {
				q.Phrases = append(q.Phrases, sg.terms)
			}
		}
		if quoted && len(run) > 1 {
			q.Phrases = append(q.Phrases, run)
		}
		lastWord = ""
		if !quoted && i < 0 && len(segs) > 0 {
			if last := segs[len(segs)-1]; !last.cjk && last.end == len(part) {
				lastWord = last.terms[0]
			}
		}
		if i < 0 {
			break
		}
		_, size := utf8.DecodeRuneInString(rest[i:])
		rest = rest[i+size:]
		quoted = !quoted
	}
	if lastWord != "" && utf8.RuneCountInString(lastWord) >= MinPrefixRunes {
		q.Prefix = lastWord
		// The word stays a term only where something else needs it: a phrase, or an earlier
		// occurrence in the query.
		needed := false
		for _, ph := range q.Phrases {
			needed = needed || slices.Contains(ph, lastWord)
		}
		seen := 0
		for _, t := range Tokens(text) {
			if t == lastWord {
				seen++
			}
		}
		if !needed && seen == 1 {
			delete(terms, lastWord)
		}
	}
	for t := range terms {
		q.Terms = append(q.Terms, t)
	}
	slices.Sort(q.Terms)
	n := len(q.Terms)
	if q.Prefix != "" {
		n++
	}
	if n == 0 {
		return Query{}, fmt.Errorf("%w: it has no words to search for", ErrQuery)
	}
	if n > MaxQueryTerms {
		return Query{}, fmt.Errorf("%w: %d terms, at most %d", ErrQuery, n, MaxQueryTerms)
	}
	return q, nil
}

// Key is a canonical form of the query: two queries with the same key match the same documents
// in the same order.
func (q Query) Key() string {
	var b strings.Builder
	b.WriteString(strings.Join(q.Terms, " "))
	b.WriteString("|")
	b.WriteString(q.Prefix)
	for _, ph := range q.Phrases {
		b.WriteString("|")
		b.WriteString(strings.Join(ph, " "))
	}
	return b.String()
}

// Match reports whether a document whose text has the terms tokens (in order, as Tokens returns
// them, the terms of all its fields one after another) matches the query.
func (q Query) Match(tokens []string) bool {
	set := make(map[string]struct{}, len(tokens))
	prefixed := q.Prefix == ""
	for _, t := range tokens {
		set[t] = struct{}{}
		if !prefixed && strings.HasPrefix(t, q.Prefix) {
			prefixed = true
		}
	}
	if !prefixed {
		return false
	}
	for _, t := range q.Terms {
		if _, ok := set[t]; !ok {
			return false
		}
	}
	for _, ph := range q.Phrases {
		if !containsRun(tokens, ph) {
			return false
		}
	}
	return true
}

// containsRun reports whether run appears in tokens as consecutive elements.
func containsRun(tokens, run []string) bool {
	at, _ := indexRun(tokens, run)
	return at >= 0
}

// indexRun returns the index of the first place run appears in tokens as consecutive elements,
// -1 for none, and how many comparisons of two terms it made. It is Knuth–Morris–Pratt's search,
// so that it makes at most 2 × (len(tokens) + len(run)) comparisons: a phrase whose every start
// matches a long way (a repeated term) costs no more than any other, where trying each start
// anew cost len(tokens) × len(run).
func indexRun(tokens, run []string) (at, steps int) {
	if len(run) == 0 {
		return 0, 0
	}
	// next[j] is the length of the longest proper prefix of run[:j+1] that is also its suffix.
	next := make([]int, len(run))
	for j, k := 1, 0; j < len(run); j++ {
		for {
			steps++
			if run[j] == run[k] {
				k++
				break
			}
			if k == 0 {
				break
			}
			k = next[k-1]
		}
		next[j] = k
	}
	k := 0 // how many terms of run match the tokens ending at i
	for i, t := range tokens {
		for {
			steps++
			if t == run[k] {
				k++
				break
			}
			if k == 0 {
				break
			}
			k = next[k-1]
		}
		if k == len(run) {
			return i - len(run) + 1, steps
		}
	}
	return -1, steps
}
