package store

import (
	"context"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBioRunes is the longest bio a user may write.
const MaxBioRunes = 500

// ProfileEdit is the input of UpdateProfile: a nil field is left as it is, "" clears it.
type ProfileEdit struct {
	Bio       *string
	AvatarURL *string
	// ShowNSFW, when not nil, sets whether NSFW posts reach the user (see labels.go).
	ShowNSFW *bool
}

// UpdateProfile sets or clears user's bio (at most MaxBioRunes characters, checked like other
// text) and avatar URL (see checkAvatarURL), in one script on the user's slot; invalid values are
// KindInvalid. Setting the values the profile has changes nothing.
func (s *Store) UpdateProfile(ctx context.Context, user UserKey, in ProfileEdit) (*User, error) {
	uid := string(user)
	if in.Bio != nil {
		if err := checkText("bio", *in.Bio, 0, MaxBioRunes); err != nil {
			return nil, err
		}
	}
	if in.AvatarURL != nil && *in.AvatarURL != "" {
		if err := checkAvatarURL(*in.AvatarURL); err != nil {
			return nil, err
		}
	}
	// A new bio's words go into the users' search index after the atomic step: the user's repair
	// note (repairUser indexes the user again) finishes an update cut off in between.
	item := ""
	if in.Bio != nil {
		item = repairUser + ":" + uid
	}
	n, err := s.allowWrite(ctx, uid, item)
	if err != nil {
		return nil, err
	}
	if err := s.filterTexts(map[string]*string{"bio": in.Bio}); err != nil {
		return nil, err
	}
	if in.AvatarURL != nil {
		if err := s.filterStrict("avatarUrl", *in.AvatarURL); err != nil {
			return nil, err
		}
	}
	args := append(append(optionalArg(in.Bio), optionalArg(in.AvatarURL)...), labelArgs(in.ShowNSFW)...)
	args = append(args, s.k.chanSessions(uid), s.pubSubArg())
	for _, f := range userFields {
		args = append(args, f)
	}
	reply, err := s.run(ctx, "update_profile", []string{s.k.user(uid)}, args...)
	if err != nil {
		return nil, err
	}
	fields, err := replyStrings("update_profile", reply, len(userFields)) // a missing user is its NOTFOUND error
	if err != nil {
		return nil, err
	}
	u := s.userFromFields(uid, fields)
	if in.Bio != nil {
		if err := s.indexUser(ctx, uid, u.Name, u.Bio, false); err != nil {
			return nil, err
		}
	}
	s.settled(ctx, n)
	return u, nil
}

// checkAvatarURL is checkImageURL of a user's picture.
func checkAvatarURL(s string) error { return checkImageURL("avatarUrl", s) }

// checkImageURL accepts an absolute https URL with a host, of at most MaxURLBytes of valid
// UTF-8, without spaces, control characters or credentials (user:pass@host): a picture every
// reader's browser loads must not leak over plain http, run script (javascript:) or carry a
// password. arg names the argument in the error.
func checkImageURL(arg, s string) error {
	if len(s) > MaxURLBytes || !utf8.ValidString(s) {
		return invalidf("%s must be valid UTF-8 of at most %d bytes", arg, MaxURLBytes)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return invalidf("%s must not contain spaces or control characters", arg)
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Opaque != "" || u.Hostname() == "" {
		return invalidf("%s must be an absolute https URL", arg)
	}
	if u.User != nil {
		return invalidf("%s must not carry credentials", arg)
	}
	return nil
}
