package store

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agora/agora/internal/rdb"
)

// Site filters: words and link domains that the site's admins keep out of every text a user
// writes — post titles, bodies and URLs, comments, user names at sign-up, group names and
// descriptions (and the rest of a group's page), bios, and their edits. With FilterRefuse a text
// holding one is refused (KindFiltered, naming the field); with FilterReplace the matched words
// are replaced by asterisks, one per character. Names and URLs cannot hold asterisks: they are
// refused under either action. Words match as a reader sees them (filter_match.go).
//
// Where they live: one hash, {filters}, with a version raised by every change. Each process
// keeps the compiled filters with the version it read and the time it last checked it. A write's
// first round trip (allowWrite: its rate limit and bans) carries filters_get.lua whenever this
// process last checked a second ago or more; the script answers with the version alone when it
// has not changed and with the filters when it has. So a change applies on every replica within
// a second (on the one that made it, at once), and no write pays a round trip for it.

// FilterAction is what the site filters do with a text that holds a filtered word or domain.
type FilterAction string

// The filter actions.
const (
	FilterRefuse  FilterAction = "REFUSE"
	FilterReplace FilterAction = "REPLACE"
)

// Limits of the site filters.
const (
	MaxFilterWords      = 1000
	MaxFilterWordRunes  = 100
	MaxFilterDomains    = 1000
	filterCheckInterval = time.Second
)

// SiteFilters are the site filters as an admin sees them.
type SiteFilters struct {
	Words      []string
	URLDomains []string
	Action     FilterAction
	UpdatedAt  *time.Time // nil when never set
	UpdatedBy  UserKey    // "" when never set
}

// filterState is the site filters as one process holds them.
type filterState struct {
	version  string
	filters  SiteFilters
	compiled *wordFilter
	checked  time.Time // when this process last read the version
}

// filterCall returns the call that reads the site filters in a write's first round trip when
// this process's copy is due to be checked (filterCheckInterval), and false when it is not.
func (s *Store) filterCall() (scriptCall, bool) {
	st := s.filters.Load()
	now := s.now()
	if st != nil && !now.Before(st.checked) && now.Sub(st.checked) < filterCheckInterval {
		return scriptCall{}, false
	}
	version := ""
	if st != nil {
		version = st.version
	}
	return scriptCall{name: "filters_get", keys: []string{s.k.filters()}, args: []any{version}}, true
}

// applyFilters keeps the reply of script (filters_get or filters_set), read at checked, as this
// process's copy of the filters; a reply of another shape is a ReplyError.
func (s *Store) applyFilters(script string, reply any, checked time.Time) error {
	if v, ok := reply.(string); ok { // unchanged since the version sent (any other shape: parseFilters)
		old := s.filters.Load()
		switch {
		case old != nil && old.version == v:
			st := *old
			st.checked = checked
			s.filters.Store(&st)
		case old == nil && v == "": // never set
			s.filters.Store(&filterState{checked: checked, filters: SiteFilters{Action: FilterRefuse, Words: []string{}, URLDomains: []string{}}})
		}
		return nil
	}
	st, err := parseFilters(script, reply, checked)
	if err != nil {
		return err
	}
	if old := s.filters.Load(); old != nil && old.version != "" && st.version != "" && atoi64(st.version) < atoi64(old.version) {
		return nil // an older reading, overtaken by a newer one
	}
	s.filters.Store(st)
	return nil
}

// parseFilters reads the filters from a reply {v, a, w, d, by, at} of script (or of the command
// an HMGET); a reply of another shape is a ReplyError.
func parseFilters(script string, reply any, checked time.Time) (*filterState, error) {
	f, err := replyStrings(script, reply, 6)
	if err != nil {
		return nil, err
	}
	st := &filterState{version: f[0], checked: checked, filters: SiteFilters{Action: FilterRefuse, Words: []string{}, URLDomains: []string{}}}
	if a := FilterAction(f[1]); a == FilterReplace {
		st.filters.Action = a
	}
	if f[2] != "" {
		_ = json.Unmarshal([]byte(f[2]), &st.filters.Words)
	}
	if f[3] != "" {
		_ = json.Unmarshal([]byte(f[3]), &st.filters.URLDomains)
	}
	if f[4] != "" {
		at := fromMillis(atoi64(f[5]))
		st.filters.UpdatedAt, st.filters.UpdatedBy = &at, UserKey(f[4])
	}
	st.compiled = compileFilter(st.filters.Words, st.filters.URLDomains)
	return st, nil
}

// compiledFilters returns this process's copy of the filters (nil when it has none yet).
func (s *Store) compiledFilters() (*wordFilter, FilterAction) {
	st := s.filters.Load()
	if st == nil {
		return nil, FilterRefuse
	}
	return st.compiled, st.filters.Action
}

// filterText applies the site filters to text, the argument field of a write: under
// FilterRefuse a text holding a filtered word or domain is KindFiltered; under FilterReplace it
// comes back with the matches replaced by asterisks. Call it after the write's allowWrite (whose
// round trip refreshes the filters). Any write of user text calls it — a message's body too:
//
//	if _, err := s.allowWrite(ctx, uid, item, scope); err != nil { … }
//	body, err := s.filterText("body", body)
func (s *Store) filterText(field, text string) (string, error) {
	f, action := s.compiledFilters()
	spans := f.matches(text)
	if len(spans) == 0 {
		return text, nil
	}
	if action == FilterReplace {
		return mask(text, spans), nil
	}
	return "", filteredError(field)
}

// filteredReason applies filterText to an optional reason (nil is none): a moderator's, which the
// public moderation log shows (and any user may moderate a group of their own), a ban's, which its
// user reads, a report's, which the moderators read. It returns the reason to store.
func (s *Store) filteredReason(reason *string) (*string, error) {
	if reason == nil {
		return nil, nil
	}
	v, err := s.filterText("reason", *reason)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// filterTexts applies filterText to each non-nil text, in place.
func (s *Store) filterTexts(fields map[string]*string) error {
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}) {
		p := fields[name]
		if p == nil || *p == "" {
			continue
		}
		v, err := s.filterText(name, *p)
		if err != nil {
			return err
		}
		*p = v
	}
	return nil
}

// filterStrict refuses text, the argument field, when it holds a filtered word or domain,
// whatever the action: for names and URLs, which asterisks would make invalid.
func (s *Store) filterStrict(field, text string) error {
	f, _ := s.compiledFilters()
	if text == "" || f.empty() {
		return nil
	}
	if u, err := url.Parse(text); err == nil && u.Hostname() != "" && f.blocksHost(u.Hostname()) {
		return filteredError(field)
	}
	if len(f.matches(text)) > 0 {
		return filteredError(field)
	}
	return nil
}

// filteredError is the error of a text the site filters refuse.
func filteredError(field string) error {
	return &Error{Kind: KindFiltered, Field: field, Msg: fmt.Sprintf("the site's filters refuse this %s", field)}
}

// filtersRead reads the filters' hash through a loader, so that a response showing them records
// their revision.
func filtersRead(key string) read {
	return read{key: "filters:" + key, rkey: key, fill: func(ctx context.Context, p rdb.Pipeliner, c *call) {
		c.cmd = p.HMGet(ctx, key, "v", "a", "w", "d", "by", "at")
	}}
}

// SiteFilters returns the site filters, to a site admin only (KindForbidden otherwise).
func (l *Loader) SiteFilters(ctx context.Context, viewer UserKey) (*SiteFilters, error) {
	if !l.s.IsAdmin(viewer) {
		return nil, &Error{Kind: KindForbidden, Msg: "only site admins see the site filters"}
	}
	c, err := l.get(ctx, filtersRead(l.s.k.filters()))
	if err != nil {
		return nil, err
	}
	vals, err := c.cmd.(*rdb.SliceCmd).Result()
	if err != nil {
		return nil, fmt.Errorf("read the site filters: %w", err)
	}
	st, err := parseFilters("HMGET", vals, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("read the site filters: %w", err)
	}
	return &st.filters, nil
}

// UpdateSiteFilters replaces the site filters: the words and the domains given (nil keeps them
// as they are; empty clears them) and the action. Only site admins may (KindForbidden). Words
// are 1–MaxFilterWordRunes characters with a letter or digit each, at most MaxFilterWords;
// domains are host names (a URL gives its host; "*." is dropped), at most MaxFilterDomains: a
// domain filters its subdomains too. Duplicates (as the filter compares them) are dropped.
func (s *Store) UpdateSiteFilters(ctx context.Context, admin UserKey, words, domains *[]string, action FilterAction) (*SiteFilters, error) {
	if !s.IsAdmin(admin) {
		return nil, &Error{Kind: KindForbidden, Msg: "only site admins change the site filters"}
	}
	if action != FilterRefuse && action != FilterReplace {
		return nil, invalidf("action must be REFUSE or REPLACE")
	}
	var w, d string
	if words != nil {
		ws, err := normalizeFilterWords(*words)
		if err != nil {
			return nil, err
		}
		w = mustJSON(ws)
	}
	if domains != nil {
		ds, err := normalizeFilterDomains(*domains)
		if err != nil {
			return nil, err
		}
		d = mustJSON(ds)
	}
	if _, err := s.allowWrite(ctx, string(admin), "", banFree); err != nil {
		return nil, err
	}
	at := s.now()
	v, err := s.run(ctx, "filters_set", []string{s.k.filters()}, string(action), w, d, string(admin), at.UnixMilli())
	if err != nil {
		return nil, err
	}
	if err := s.applyFilters("filters_set", v, at); err != nil {
		return nil, err
	}
	st, err := parseFilters("filters_set", v, at)
	if err != nil {
		return nil, err
	}
	return &st.filters, nil
}

// mustJSON encodes a list of strings.
func mustJSON(v []string) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // cannot happen: strings always encode
	}
	return string(b)
}

// normalizeFilterWords checks and trims filter words, dropping duplicates as the filter compares
// them.
func normalizeFilterWords(in []string) ([]string, error) {
	if len(in) > MaxFilterWords {
		return nil, invalidf("at most %d filtered words", MaxFilterWords)
	}
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, w := range in {
		w = strings.TrimSpace(w)
		if err := checkText("word", w, 1, MaxFilterWordRunes); err != nil {
			return nil, err
		}
		tw := textWords(w)
		if len(tw) == 0 {
			return nil, invalidf("the filtered word %q has no letter or digit", w)
		}
		var key []string
		for _, x := range tw {
			key = append(key, x.skel)
		}
		k := strings.Join(key, " ")
		if !seen[k] {
			seen[k] = true
			out = append(out, w)
		}
	}
	return out, nil
}

// normalizeFilterDomains turns each entry into a host name as the filter compares it: a URL
// gives its host, "*." and a trailing dot are dropped.
func normalizeFilterDomains(in []string) ([]string, error) {
	if len(in) > MaxFilterDomains {
		return nil, invalidf("at most %d filtered domains", MaxFilterDomains)
	}
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, raw := range in {
		d := strings.TrimSpace(raw)
		if !utf8.ValidString(d) || len(d) > 253 {
			return nil, invalidf("%q is not a domain", truncate(raw, 40))
		}
		if strings.Contains(d, "://") {
			u, err := url.Parse(d)
			if err != nil || u.Hostname() == "" {
				return nil, invalidf("%q is not a domain", truncate(raw, 40))
			}
			d = u.Hostname()
		}
		d = normalHost(strings.TrimPrefix(d, "*."))
		if loc := hostPattern.FindStringIndex(d); loc == nil || loc[0] != 0 || loc[1] != len(d) {
			return nil, invalidf("%q is not a domain (like example.com)", truncate(raw, 40))
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out, nil
}

// filterPost applies the site filters to a post's title and body (filterText) and refuses its URL
// and the names of the groups it goes into when they hold a filtered word or domain; a nil field
// is not checked.
func (s *Store) filterPost(title, body, u *string, groups []string) error {
	if u != nil {
		if err := s.filterStrict("url", *u); err != nil {
			return err
		}
	}
	for _, g := range groups {
		if err := s.filterStrict("groups", g); err != nil {
			return err
		}
	}
	return s.filterTexts(map[string]*string{"title": title, "body": body})
}

// signUpChecks counts a sign-up from the request's client address against
// AuthLimits.SignUpsPerAddress and refuses a name that the site filters match, reading the
// filters, when due, in the same round trip as the count.
func (s *Store) signUpChecks(ctx context.Context, name string) error {
	var calls []scriptCall
	a := s.opts.Auth
	l := limit{"sign-ups from this address", a.SignUpsPerAddress, a.SignUpWindow}
	if addr := ClientFrom(ctx); addr != "" && s.opts.WriteLimit >= 0 {
		calls = append(calls, s.rateCall(s.k.addrSignUps(addr), l, randomHex(8)))
	}
	rated := len(calls) == 1
	at := s.now()
	if c, ok := s.filterCall(); ok {
		calls = append(calls, c)
	}
	if len(calls) > 0 {
		vals, err := s.runScripts(ctx, calls)
		if err != nil {
			return err
		}
		if len(vals) > 1 || !rated {
			if err := s.applyFilters(calls[len(calls)-1].name, vals[len(vals)-1], at); err != nil {
				return err
			}
		}
		if rated {
			if err := rateResult(vals[0], l); err != nil {
				return err
			}
		}
	}
	return s.filterStrict("name", name)
}
