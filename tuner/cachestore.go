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

// putWinner stores e and returns the entry the cache keeps for e's slot
// (e, or a better one already there) and what the write set aside. ctx
// ends a wait (another writer's lock, an unresponsive server); once a
// file's lock is held, the write finishes.
func (s *Searcher) putWinner(ctx context.Context, e cache.Entry, reject func(cache.Entry) error) (*cache.Entry, cache.Merged, error) {
	st := s.Cache
	if st == nil {
		return &e, cache.Merged{}, nil
	}
	m, err := st.Put(ctx, cache.Source{Name: "search", Entries: []cache.Entry{e}, Reject: reject})
	if err != nil {
		return nil, m, err
	}
	slot := e.Key.Slot().AnyVersion()
	for i := range m.Entries {
		if m.Entries[i].Key.Slot().AnyVersion() == slot {
			return &m.Entries[i], m, nil
		}
	}
	return nil, m, fmt.Errorf("cache %s: the merge lost the slot of %s", st.Location(), e.Key)
}

// StoreError is a finished search whose winner could not be stored: its
// trials are in the trial log, which --resume continues from.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return "the winner was not stored: " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }
