package store

import (
	"net/url"
	"unicode/utf8"
)

// Limits of the contract on names and text.
const (
	MaxTitleRunes       = 300
	MaxPostBodyRunes    = 40000
	MaxCommentBodyRunes = 10000
	MaxURLBytes         = 2048
	MinPasswordBytes    = 8
	MaxPasswordBytes    = 256
	MaxGroupsPerPost    = 10
)

// validUserName reports whether s is 3–32 of A-Z a-z 0-9 _ -.
func validUserName(s string) bool {
	if len(s) < 3 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validGroupName reports whether s is 1–32 of a-z 0-9 _ - (already lower-cased).
func validGroupName(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// NormalizeGroupName checks a group name and lower-cases it. The characters are checked before
// folding, and only ASCII folds: Unicode lower-casing would turn "\u212Aotlin" (KELVIN SIGN) into
// "kotlin".
func NormalizeGroupName(s string) (string, error) {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	if n := string(b); validGroupName(n) {
		return n, nil
	}
	return "", invalidf("group name %q must be 1–32 of a-z A-Z 0-9 _ -", truncate(s, 40))
}

// normalizeGroups lower-cases, checks and de-duplicates group names, keeping their order.
func normalizeGroups(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, raw := range names {
		n, err := NormalizeGroupName(raw)
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// checkText checks that s is valid UTF-8 of min..max characters.
func checkText(field, s string, min, max int) error {
	if !utf8.ValidString(s) {
		return invalidf("%s is not valid UTF-8", field)
	}
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t' && r != '\r') || (r >= 0x7f && r < 0xa0) {
			return invalidf("%s holds the control character U+%04X (only newlines and tabs are allowed)", field, r)
		}
	}
	n := utf8.RuneCountInString(s)
	if n < min {
		if min == 1 {
			return invalidf("%s must not be empty", field)
		}
		return invalidf("%s must be at least %d characters", field, min)
	}
	if n > max {
		return invalidf("%s must be at most %d characters (got %d)", field, max, n)
	}
	return nil
}

// checkURL accepts absolute http and https URLs.
func checkURL(s string) error {
	if len(s) > MaxURLBytes || !utf8.ValidString(s) {
		return invalidf("url must be valid UTF-8 of at most %d bytes", MaxURLBytes)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalidf("url must be an absolute http or https URL")
	}
	return nil
}
