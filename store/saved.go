package store

import "context"

// MaxSavedPosts is the most posts a user may keep saved: saving one more is KindLimitReached.
// Posts deleted since they were saved stop counting once the limit is met (see SavePost).
const MaxSavedPosts = 1000

// savedTag is the cursor tag of the saved posts.
const savedTag = "sv"

// SavePost adds a post the user can see to their saved posts, most recently saved first; saving
// it again changes nothing. A post that is missing, deleted, not yet published or removed (to
// anyone but its author) is KindNotFound. A user holds at most MaxSavedPosts.
func (s *Store) SavePost(ctx context.Context, user UserKey, id string) (*Post, error) {
	p, err := s.visiblePost(ctx, user, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.allowWrite(ctx, string(user), "", banFree); err != nil {
		return nil, err
	}
	err = s.savePost(ctx, user, p.Key())
	if IsKind(err, KindLimitReached) {
		// Saved posts deleted since still count: drop them, and try again if that made room.
		dropped, derr := s.dropGoneSaves(ctx, user)
		if derr != nil {
			return nil, derr
		}
		if dropped > 0 {
			err = s.savePost(ctx, user, p.Key())
		}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Store) savePost(ctx context.Context, user UserKey, pid string) error {
	// The script reads the deletion in the user's hash (checks that passed just before it).
	_, err := s.run(ctx, "save_post", []string{s.k.saved(string(user)), s.k.user(string(user))}, pid, s.now().UnixMilli(), MaxSavedPosts)
	return err
}

// UnsavePost takes a post out of the user's saved posts; unsaving one not saved changes nothing.
// The post leaves the saved set even when the user can no longer see it (it was deleted or
// removed), but only a post the user can see is answered: otherwise the result is KindNotFound.
func (s *Store) UnsavePost(ctx context.Context, user UserKey, id string) (*Post, error) {
	pid, err := PostKey(id)
	if err != nil {
		return nil, err
	}
	if _, err := s.allowWrite(ctx, string(user), "", banFree); err != nil {
		return nil, err
	}
	if _, err := s.run(ctx, "unsave_posts", []string{s.k.saved(string(user))}, pid); err != nil {
		return nil, err
	}
	return s.visiblePost(ctx, user, id)
}

// visiblePost loads a published post the user may see, or fails with KindNotFound: a removed
// post only its author, the moderators of its groups and the admins see, as reads decide
// (resolvers' visiblePost).
func (s *Store) visiblePost(ctx context.Context, user UserKey, id string) (*Post, error) {
	l := s.NewLoader()
	p, err := l.Post(ctx, id)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, notFoundf("no such post")
	}
	if p.Removed && p.Author != user {
		ok, err := l.CanModerate(ctx, user, p.GroupNames)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, notFoundf("no such post")
		}
	}
	return p, nil
}

// dropGoneSaves takes the posts deleted since out of the user's saved posts, and returns how many
// it took out. It reads every saved post (at most MaxSavedPosts) in one pipeline, so it runs only
// when the limit is met. A deleted post never comes back, so taking it out cannot race a save.
func (s *Store) dropGoneSaves(ctx context.Context, user UserKey) (int, error) {
	key := s.k.saved(string(user))
	l := s.NewLoader()
	pids, err := l.zrangeAll(ctx, key)
	if err != nil {
		return 0, err
	}
	_, kept, err := l.postsByKey(ctx, pids, false)
	if err != nil {
		return 0, err
	}
	var gone []any
	next := 0
	for i, pid := range pids {
		if next < len(kept) && kept[next] == i {
			next++
			continue
		}
		gone = append(gone, pid)
	}
	if len(gone) == 0 {
		return 0, nil
	}
	n, err := s.run(ctx, "unsave_posts", []string{key}, gone...)
	if err != nil {
		return 0, err
	}
	dropped, err := replyInt("unsave_posts", n)
	if err != nil {
		return 0, err
	}
	return int(dropped), nil
}

// zrangeAll loads every member of a sorted set, lowest score first.
func (l *Loader) zrangeAll(ctx context.Context, key string) ([]string, error) {
	c, err := l.get(ctx, zrangeRead(key, 0, -1))
	if err != nil {
		return nil, err
	}
	return zrangeMembers(c), nil
}

// SavedPosts loads one page of the viewer's saved posts, most recently saved first, and what
// needs says of them (see Walk). Posts deleted or removed since they were saved are left out of
// the page; Total counts every saved entry.
func (l *Loader) SavedPosts(ctx context.Context, viewer UserKey, w Window, needs func() *Needs) (*Page[*Post], error) {
	// Removed and erased posts leave every listing, this one included: no deletion walks the
	// saved lists that hold them.
	return withoutRemoved(l.postPage(ctx, l.s.k.saved(string(viewer)), savedTag, windowCut{}, w, needs))
}

// Saved reports whether the viewer saved the post; false for an anonymous viewer. Walk reads it
// for a whole list at once (Needs.Saved).
func (l *Loader) Saved(ctx context.Context, viewer UserKey, p *Post) (bool, error) {
	if viewer == "" {
		return false, nil
	}
	_, ok, err := l.zscore(ctx, l.s.k.saved(string(viewer)), p.Key())
	return ok, err
}

// savedRead is the read of whether the viewer saved a post, when the needs ask for it.
func (l *Loader) savedRead(it walkItem) *read {
	if !it.needs.Saved || it.needs.Viewer == "" || it.kind != ItemPost {
		return nil
	}
	r := zscoreRead(l.s.k.saved(string(it.needs.Viewer)), it.key)
	return &r
}
