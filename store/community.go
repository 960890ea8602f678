package store

import "time"

// The types of running a community: roles, bans, the moderation log and reports. Site admins
// are named by Options.Admins; a group's moderators are the members of its groupMods set; every
// moderation action is recorded in the public moderation log.

// MaxPins is how many posts may be pinned in one group.
const MaxPins = 3

// MaxOpenReports is how many open reports one user may hold.
const MaxOpenReports = 20

// MaxGroupsJoined is how many groups one user may join.
const MaxGroupsJoined = 500

// MaxGroupFeedGroups is how many of the viewer's groups, the most recently joined, GroupFeed
// merges.
const MaxGroupFeedGroups = 100

// ModActionKind is what a moderator did.
type ModActionKind string

// The moderation actions.
const (
	ModRemovePost      ModActionKind = "REMOVE_POST"
	ModRestorePost     ModActionKind = "RESTORE_POST"
	ModRemoveComment   ModActionKind = "REMOVE_COMMENT"
	ModRestoreComment  ModActionKind = "RESTORE_COMMENT"
	ModLockPost        ModActionKind = "LOCK_POST"
	ModUnlockPost      ModActionKind = "UNLOCK_POST"
	ModPinPost         ModActionKind = "PIN_POST"
	ModUnpinPost       ModActionKind = "UNPIN_POST"
	ModBanUser         ModActionKind = "BAN_USER"
	ModUnbanUser       ModActionKind = "UNBAN_USER"
	ModAddModerator    ModActionKind = "ADD_MODERATOR"
	ModRemoveModerator ModActionKind = "REMOVE_MODERATOR"
	ModUpdateGroup     ModActionKind = "UPDATE_GROUP"
	ModResolveReport   ModActionKind = "RESOLVE_REPORT"
	ModDeleteUser      ModActionKind = "DELETE_USER" // an admin deleted an account (DeleteUser)
	// A moderator put a content label on someone's post (setPostLabels), or took one off; the
	// action's Label says which.
	ModLabelPost   ModActionKind = "LABEL_POST"
	ModUnlabelPost ModActionKind = "UNLABEL_POST"
	// A group's moderator labelled the group NSFW (updateGroup), or took the label off.
	ModLabelGroup   ModActionKind = "LABEL_GROUP"
	ModUnlabelGroup ModActionKind = "UNLABEL_GROUP"
)

// ContentLabel is a content label, as a label action of the moderation log names it.
type ContentLabel string

// The content labels (labels.go).
const (
	LabelNSFW    ContentLabel = "NSFW"
	LabelSpoiler ContentLabel = "SPOILER"
)

// ModAction is an entry of the moderation log.
type ModAction struct {
	ID        string // the global id: "modaction:<key>"
	Action    ModActionKind
	Moderator UserKey
	Group     string // the group it was done in; "" for a site-wide action
	TargetID  string // the global id of the post, comment, user or report it was done to
	Reason    *string
	Until     *time.Time // BAN_USER: when the ban ends; nil when permanent
	// Label is the label a LABEL_* or UNLABEL_* action put on or took off; nil for the others.
	Label     *ContentLabel
	CreatedAt time.Time
}

// NodeID returns the action's global id.
func (a *ModAction) NodeID() string { return a.ID }

// Ban is a ban in force: the user's writes in its scope are refused with KindBanned.
type Ban struct {
	ID        string // the global id: "ban:g:<group>:<user>" or "ban:site:<user>" (see banID)
	User      UserKey
	Group     string     // "" for a site ban
	Until     *time.Time // nil when permanent
	Reason    string
	CreatedAt time.Time
	Moderator UserKey // who banned the user
}

// NodeID returns the ban's global id.
func (b *Ban) NodeID() string { return b.ID }

// Report is a user's report of a post or a comment.
type Report struct {
	ID         string // the global id: "report:<number>"
	PostID     string // the global id of the post reported, or of the comment's post
	CommentID  string // the global id of the comment reported; "" for a post
	Reporter   UserKey
	Reason     string
	CreatedAt  time.Time
	Resolved   bool
	ResolvedAt *time.Time
	ResolvedBy UserKey // "" until resolved
	// Resolution is how it was resolved: ReportActioned or ReportDismissed; nil while open.
	Resolution *ReportResolution
	GroupNames []string

	author UserKey // who wrote what was reported, as the report recorded it; "" when it did not
}

// NodeID returns the report's global id.
func (r *Report) NodeID() string { return r.ID }

// Groups returns the groups whose moderators see the report.
func (r *Report) Groups() []*Group {
	out := make([]*Group, len(r.GroupNames))
	for i, n := range r.GroupNames {
		out[i] = NewGroup(n)
	}
	return out
}
