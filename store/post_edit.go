package store

import (
	"context"
	"fmt"
)

// PostEdit is the input of EditPost: each field that is not nil replaces the post's, and a URL
// of "" clears it.
type PostEdit struct {
	Title, Body, URL *string
	// NSFW and Spoiler set the post's labels when not nil (see labels.go).
	NSFW, Spoiler *bool
}

// EditPost changes the fields of a post of user's that in gives, checked as CreatePost checks
// them. A post the edit changes gets the time of the edit (EditedAt) and a new version; an edit
// that gives the values the post has changes nothing and still answers with the post. Only the
// author may edit (KindForbidden); a deleted post, and a removed one to anyone but its author,
// is KindNotFound. Mentions an edit adds notify no one.
func (s *Store) EditPost(ctx context.Context, user UserKey, id string, in PostEdit) (*Post, error) {
	uid := string(user)
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	if in.Title != nil {
		if err := checkText("title", *in.Title, 1, MaxTitleRunes); err != nil {
			return nil, err
		}
	}
	if in.Body != nil {
		if err := checkText("body", *in.Body, 0, MaxPostBodyRunes); err != nil {
			return nil, err
		}
	}
	if in.URL != nil && *in.URL != "" {
		if err := checkURL(*in.URL); err != nil {
			return nil, err
		}
	}
	// The edit's new words go into the search index after its atomic step: the repair note
	// finishes that if the process stops in between.
	links := in.URL != nil && *in.URL != "" || in.Title != nil && hasLink(*in.Title) || in.Body != nil && hasLink(*in.Body)
	n, err := s.allowGuarded(ctx, uid, repairPostChange+":"+pid, nil, &writeGuard{links: links}, onPost(pid))
	if err != nil {
		return nil, err
	}
	if err := s.filterPost(in.Title, in.Body, in.URL, nil); err != nil {
		return nil, err
	}
	args := []any{uid, s.now().UnixMilli()}
	for _, f := range []*string{in.Title, in.Body, in.URL} {
		args = append(args, optionalArg(f)...)
	}
	args = append(append(args, labelArgs(in.NSFW)...), labelArgs(in.Spoiler)...)
	reply, err := s.run(ctx, "edit_post", []string{s.k.post(pid), s.k.postTexts(pid)}, args...)
	if err != nil {
		return nil, err
	}
	h, err := replyHash("edit_post", reply)
	if err != nil {
		return nil, err
	}
	p := s.postFromHash(pid, h)
	if p == nil {
		return nil, notFoundf("no such post")
	}
	if err := s.writeSearch(ctx, postSearchDoc(p, false)); err != nil {
		return nil, fmt.Errorf("index the edit of post %s: %w", pid, err)
	}
	if in.NSFW != nil {
		// A label moves the post between the parts of its lists, NSFW or not (labels.go).
		if err := s.indexPost(ctx, p, nil); err != nil {
			return nil, err
		}
	}
	s.settled(ctx, n)
	// Published even when the edit changed nothing, as a vote is: a repeat completes an earlier
	// attempt that was cut off before it could publish.
	s.publishPostChanged(ctx, pid)
	return p, nil
}

// optionalArg is an optional field as a script takes it: "1" and the value to set it, "0" and ""
// to leave it.
func optionalArg(s *string) []any {
	if s == nil {
		return []any{"0", ""}
	}
	return []any{"1", *s}
}
