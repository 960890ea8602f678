package store

import "context"

// Live events of the notification inbox: each user has a channel of their new notifications,
// {n:<user>}:ev:notifications, in the inbox's hash slot (Channels.Notifications). An event names
// the notification; a subscriber (live.Hub.SubscribeNotificationAdded) reads it through the
// event's Loader, as the recipient.

// publishNotificationsAdded announces new notifications, each on its recipient's channel. Only
// notifications that were new are announced: a job that runs again announces nothing twice.
func (s *Store) publishNotificationsAdded(ctx context.Context, ns []notice) {
	if len(ns) == 0 {
		return
	}
	msgs := make([]message, len(ns))
	for i, n := range ns {
		msgs[i] = message{s.k.chanNotifications(n.to), EventIDs{Notification: notificationID(n.to, n.cause)}}
	}
	s.publish(ctx, msgs...)
}
