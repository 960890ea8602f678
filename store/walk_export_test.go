package store

// Hooks of walks for the external tests of package store_test.

// KeptReplies returns the page of the replies of c (nil for the post's top-level comments of
// pid) in sort and w that a walk kept for its resolver, or nil when it kept none.
func (l *Loader) KeptReplies(pid string, c *Comment, sort CommentSort, w Window) *Page[*Comment] {
	parent := topLevel
	if c != nil {
		pid, parent = c.pid, c.num
	}
	return keptPageOf[*Comment](l, appendCommentPageKey(nil, pid, parent, sort, w))
}
