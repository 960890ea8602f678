package store

import (
	"time"
)

// Comment is a comment on a post or a reply to another comment.
type Comment struct {
	ID         string
	PostID     string
	ParentID   string // "" for a top-level comment
	AuthorID   string // "" once deleted
	Text       string // "" once deleted
	Deleted    bool
	CreatedAt  time.Time
	EditedAt   *time.Time
	Depth      int
	Upvotes    int
	Downvotes  int
	ReplyCount int
}

// NodeID returns the comment's global id.
func (c *Comment) NodeID() string { return c.ID }
