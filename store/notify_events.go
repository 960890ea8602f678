package store

import (
	"context"

	"github.com/agora/agora/internal/rdb"
)

// Live events of the notification inbox: each user has a channel of their new notifications,
// {n:<user>}:ev:notifications, in the inbox's hash slot (Channels.Notifications). An event names
// the notification; a subscriber (live.Hub.SubscribeNotificationAdded) reads it through the
// event's Loader, as the recipient.

// announceNotifications announces new notifications, each on its recipient's channel, then takes
// them out of their inboxes' unannounced sets. A crash between the two announces them again with
// the next delivery: at least once, never lost.
func (s *Store) announceNotifications(ctx context.Context, pending map[string]map[string]bool) {
	if len(pending) == 0 {
		return
	}
	var msgs []message
	var ops []op
	for to, causes := range pending {
		key := s.k.inboxUnannounced(to)
		members := make([]any, 0, len(causes))
		for cause := range causes {
			msgs = append(msgs, message{s.k.chanNotifications(to), EventIDs{Notification: notificationID(to, cause)}})
			members = append(members, cause)
		}
		ops = append(ops, op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
			return p.SRem(ctx, key, members...), nil
		}})
	}
	if s.publish(ctx, msgs...) != nil {
		return // still unannounced: announced with the next delivery
	}
	if err := s.pipeline(context.WithoutCancel(ctx), ops, false); err != nil {
		s.opts.Log.WarnContext(ctx, "mark notifications announced: they are announced again with the next delivery", "err", err)
	}
}
