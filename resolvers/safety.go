package resolvers

import (
	"context"

	"github.com/agora/agora/store"
)

// Site filters: admins read and replace them; every write of text is checked against them in the
// store (store/sitefilters.go).

// siteFilters answers Query.siteFilters.
func siteFilters(ctx context.Context) (*store.SiteFilters, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	return loaderFrom(ctx).SiteFilters(ctx, uid)
}

// updateSiteFilters answers Mutation.updateSiteFilters by the rule of every editor: a list left
// out stays as it is; null or [] clears it.
func updateSiteFilters(ctx context.Context, s *store.Store, words, domains []string, action store.FilterAction) (*store.SiteFilters, error) {
	uid, err := requireViewer(ctx)
	if err != nil {
		return nil, err
	}
	f, err := s.UpdateSiteFilters(ctx, uid, editedList(ctx, "words", words), editedList(ctx, "urlDomains", domains), action)
	wrote(ctx)
	return f, err
}

// modActionNotice answers ModAction.noticeId: the notice's recipient alone reads it.
func modActionNotice(ctx context.Context, a *store.ModAction) (*string, error) {
	id, err := loaderFrom(ctx).ModActionNotice(ctx, viewerFrom(ctx), a)
	if err != nil || id == "" {
		return nil, err
	}
	return &id, nil
}

// notificationModAction answers Notification.modAction.
func notificationModAction(ctx context.Context, n *store.Notification) (*store.ModAction, error) {
	if n.ModActionID == "" {
		return nil, nil
	}
	return loaderFrom(ctx).ModAction(ctx, n.ModActionID)
}
