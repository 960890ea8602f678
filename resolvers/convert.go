package resolvers

import (
	"time"

	"github.com/agora/agora/graph/model"
	"github.com/agora/agora/store"
)

// pageArgs applies the schema's defaults to first and after.
func pageArgs(first *int, after *string) (int, string) {
	n := 20
	if first != nil {
		n = *first
	}
	a := ""
	if after != nil {
		a = *after
	}
	return n, a
}

func postSort(s *model.PostSort) store.PostSort {
	if s == nil {
		return store.SortHot
	}
	switch *s {
	case model.PostSortNew:
		return store.SortNew
	case model.PostSortTop:
		return store.SortTop
	}
	return store.SortHot
}

// voteValue maps a vote direction to the store's 1, -1 and 0.
func voteValue(d model.VoteDirection) int {
	switch d {
	case model.VoteDirectionUp:
		return 1
	case model.VoteDirectionDown:
		return -1
	}
	return 0
}

func voteDirection(v int) model.VoteDirection {
	switch v {
	case 1:
		return model.VoteDirectionUp
	case -1:
		return model.VoteDirectionDown
	}
	return model.VoteDirectionNone
}

func pageInfo[T any](p *store.Page[T]) *model.PageInfo {
	pi := &model.PageInfo{HasNextPage: p.HasNext, HasPreviousPage: p.HasPrev}
	if s := p.StartCursor(); s != "" {
		pi.StartCursor = &s
	}
	if e := p.EndCursor(); e != "" {
		pi.EndCursor = &e
	}
	return pi
}

func postConnection(p *store.Page[*store.Post]) *model.PostConnection {
	c := &model.PostConnection{PageInfo: pageInfo(p), TotalCount: p.Total, Edges: make([]*model.PostEdge, len(p.Items)), Nodes: p.Items}
	for i, it := range p.Items {
		c.Edges[i] = &model.PostEdge{Cursor: p.Cursors[i], Node: it}
	}
	return c
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
