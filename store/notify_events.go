package store

import "context"

// Live events of the notification inbox: each user has a channel of their new notifications,
// {n:<user>}:ev:notifications, in the inbox's hash slot. An event names the notification; a
// subscriber reads it through the event's Loader, as the recipient.

// publishNotificationsAdded announces new notifications, each on its recipient's channel. Only
// notifications that were new are announced: a job that runs again announces nothing twice.
func (s *Store) publishNotificationsAdded(ctx context.Context, ns []notice) {
	if len(ns) == 0 {
		return
	}
	msgs := make([]message, len(ns))
	for i, n := range ns {
		msgs[i] = message{s.k.chanNotifications(n.to), Event{Notification: notificationID(n.to, n.cause)}}
	}
	s.publish(ctx, msgs...)
}

// SubscribeNotificationAdded subscribes to the new notifications of viewer. Each event's
// Notification is the new notification's global id; read it with Loader.Notification.
func (s *Store) SubscribeNotificationAdded(ctx context.Context, viewer UserKey) (*EventStream, error) {
	if !validUserName(string(viewer)) {
		return nil, invalidf("malformed user %q", truncate(string(viewer), 40))
	}
	return s.hub.subscribe(ctx, s.k.chanNotifications(string(viewer)))
}
