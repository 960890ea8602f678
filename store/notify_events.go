package store

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
)

// Live events of the notification inbox: each user has a channel of their new notifications,
// {n:<user>}:ev:notifications, in the inbox's hash slot (Channels.Notifications). An event names
// the notification; a subscriber (live.Hub.SubscribeNotificationAdded) reads it through the
// event's Loader, as the recipient.

// announceNotifications announces the notifications of pending (recipient → causes) that their
// inboxes still hold unannounced, each on its recipient's channel: one notify_announce.lua call
// per inbox, which takes each id out of the inbox's unannounced set and announces it in the same
// step. So a notification is announced once even when two deliveries into one inbox both saw it
// unannounced (each notify.lua replies every unannounced id of its inbox), and one that a crash
// kept from being announced is announced with the next delivery: never lost, never twice.
func (s *Store) announceNotifications(ctx context.Context, pending map[string]map[string]bool) {
	if len(pending) == 0 {
		return
	}
	calls := make([]scriptCall, 0, len(pending))
	for to, causes := range pending {
		channel := s.k.chanNotifications(to)
		args := []any{channel, s.logLengthOf(channel), int(s.opts.EventLogAge.Seconds()), s.pubSubArg()}
		for _, cause := range slices.Sorted(maps.Keys(causes)) { // in a stable order
			b, err := json.Marshal(EventIDs{Notification: notificationID(to, cause)})
			if err != nil {
				s.opts.Log.ErrorContext(ctx, "live event: encode", "channel", channel, "err", err)
				return
			}
			args = append(args, cause, b)
		}
		calls = append(calls, scriptCall{name: "notify_announce", keys: []string{s.k.inboxUnannounced(to), s.k.logOf(channel)}, args: args})
	}
	if err := s.runMany(context.WithoutCancel(ctx), calls); err != nil {
		s.opts.Log.WarnContext(ctx, "announce notifications: they are announced with the next delivery", "err", err)
	}
}
