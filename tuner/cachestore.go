package tuner

import (
	"context"
	"errors"
	"fmt"

	"github.com/symmtune/symmtune/cache"
)

// checkCache reads the cache before a search. A corrupt cache would only be
// found when the winner is stored, after every trial has run, and it is
// never overwritten; an unreachable server likewise. Either fails now.
func (s *Searcher) checkCache(ctx context.Context) error {
	st := s.Cache
	if st == nil {
		return nil
	}
	if _, err := st.Load(ctx); err != nil {
		var fe *cache.FileError
		if errors.As(err, &fe) {
			return inputErrorf("not searching: %w", err)
		}
		return fmt.Errorf("not searching: %w", err)
	}
	return nil
}

// putWinner stores e and returns the entry the cache keeps for e's slot:
// e, or a better one already there.
func (s *Searcher) putWinner(e cache.Entry) (*cache.Entry, error) {
	st := s.Cache
	if st == nil {
		return &e, nil
	}
	// Not the search's context: an interrupt after the last trial must not
	// cost the finished search its winner.
	m, err := st.Put(context.Background(), cache.Source{Name: "search", Entries: []cache.Entry{e}})
	if err != nil {
		return nil, err
	}
	slot := e.Key.Slot().AnyVersion()
	for i := range m.Entries {
		if m.Entries[i].Key.Slot().AnyVersion() == slot {
			return &m.Entries[i], nil
		}
	}
	return nil, fmt.Errorf("cache %s: the merge lost the slot of %s", st.Location(), e.Key)
}
