package storage

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/symmtune/symmtune/cache"
)

// The Redis layout: one string key per slot holding the slot's entry in
// the cache file format (cache.EncodeEntry, so every reader parses it like
// a file), and one set listing the slots. Both change together in one
// MULTI/EXEC, so a reader never finds half an entry and the set never
// names an entry that was not written. The "v1" is the layout version.
const (
	keyPrefix = "symmtune:v1:slot:"
	indexKey  = "symmtune:v1:slots"
	// damagedPrefix keys a list per slot of the values a write found
	// damaged and replaced: set aside, never lost.
	damagedPrefix = "symmtune:v1:damaged:"
)

// casAttempts bounds the optimistic transactions on one slot: a retry
// happens only when another writer changed that same slot in between.
const casAttempts = 100

// Redis is the Storage of a Redis server (any server speaking RESP: Redis,
// Valkey, KeyDB).
type Redis struct {
	client   *redis.Client
	location string // redacted
}

// UnavailableError is a Redis command that failed: a lost or refused
// connection, a timeout, a refused password. It matches
// cache.ErrUnavailable.
type UnavailableError struct {
	Location string
	Op       string
	Err      error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("cache %s: %s: %v", e.Location, e.Op, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, cache.ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == cache.ErrUnavailable }

type redisURL struct {
	opts     *redis.Options
	location string
}

var quietOnce sync.Once

func openRedis(loc string, getenv func(string) string) (*Redis, error) {
	u, err := parseRedisURL(loc, getenv)
	if err != nil {
		return nil, err
	}
	// go-redis logs reconnects and the like to stderr on its own; every
	// failure that matters reaches the caller as an error instead.
	quietOnce.Do(logging.Disable)
	return &Redis{client: redis.NewClient(u.opts), location: u.location}, nil
}

// parseRedisURL reads redis[s]://[user[:password]@]host[:port][/db], the
// credentials from getenv where the URL has none. Its errors never quote
// the URL: url.Parse's would, password included.
func parseRedisURL(loc string, getenv func(string) string) (redisURL, error) {
	bad := func(why string) (redisURL, error) {
		return redisURL{}, &LocationError{fmt.Sprintf("cache location %s: %s (want redis[s]://[user[:password]@]host[:port][/db])", redactRaw(loc), why)}
	}
	u, err := url.Parse(loc)
	if err != nil {
		return bad("not a valid URL")
	}
	scheme := strings.ToLower(u.Scheme)
	host := u.Hostname()
	if host == "" {
		return bad("no host")
	}
	port := u.Port()
	if port == "" {
		port = "6379"
	} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return bad("port must be 1..65535")
	}
	db := 0
	if p := strings.Trim(u.Path, "/"); p != "" {
		if db, err = strconv.Atoi(p); err != nil || db < 0 {
			return bad("the path must be a database number")
		}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return bad("no query or fragment is read")
	}
	username, password := getenv(EnvRedisUsername), getenv(EnvRedisPassword)
	if u.User != nil {
		username = u.User.Username()
		if p, ok := u.User.Password(); ok {
			password = p
		}
	}
	addr := net.JoinHostPort(host, port)
	o := &redis.Options{
		Addr:     addr,
		Username: username,
		Password: password,
		DB:       db,
		Protocol: 2,
		// Retries are ours: the client's own would resend a transaction on
		// a new connection, where the WATCH that guards it does not hold.
		MaxRetries:               -1,
		DialTimeout:              5 * time.Second,
		ReadTimeout:              30 * time.Second,
		WriteTimeout:             30 * time.Second,
		DisableIdentity:          true,
		ContextTimeoutEnabled:    true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
	if scheme == "rediss" {
		// System roots; SSL_CERT_FILE / SSL_CERT_DIR name others.
		o.TLSConfig = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	return redisURL{opts: o, location: fmt.Sprintf("%s://%s/%d", scheme, addr, db)}, nil
}

// Location is the URL without credentials.
func (r *Redis) Location() string { return r.location }

// Close closes the connections.
func (r *Redis) Close() error { return r.client.Close() }

// Check connects and authenticates (a PING), so that a wrong address or
// password is found before any work whose results the server must keep.
func (r *Redis) Check(ctx context.Context) error {
	_, err := interruptible(ctx, func() (struct{}, error) {
		if err := r.client.Ping(ctx).Err(); err != nil {
			return struct{}{}, r.fail("connect", err)
		}
		return struct{}{}, nil
	})
	return err
}

// interruptible runs op and returns as soon as ctx ends: the client gives
// up on a command only at its own timeouts (30 s for an unresponsive
// server), which must not hold an interrupted program. The abandoned
// command ends at those timeouts; a write it carried is applied whole or
// not at all (one MULTI/EXEC). op's result comes back through the
// channel, never through a variable the caller shares with it: an
// abandoned op that finishes later must not write what the caller has
// already returned (the race detector caught Load's doing so).
func interruptible[T any](ctx context.Context, op func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return op()
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := op()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}

func (r *Redis) fail(op string, err error) error {
	return &UnavailableError{Location: r.location, Op: op, Err: err}
}

// where names a slot's key in errors about its contents.
func (r *Redis) where(key string) string {
	return fmt.Sprintf("%s key %q", r.location, key)
}

// mgetChunk bounds the keys of one MGET.
const mgetChunk = 256

// Load reads every entry. Each entry is read whole; entries written while
// Load runs may or may not be in the result.
func (r *Redis) Load(ctx context.Context) (*cache.Store, error) {
	return interruptible(ctx, func() (*cache.Store, error) { return r.load(ctx) })
}

// load is Load. A key whose value cannot be read as an entry of its slot
// is damage of that slot alone: it is listed (Store.Damaged) and skipped.
func (r *Redis) load(ctx context.Context) (*cache.Store, error) {
	keys, err := r.client.SMembers(ctx, indexKey).Result()
	if err != nil {
		return nil, r.fail("read the slot index", err)
	}
	slices.Sort(keys)
	var es []cache.Entry
	var damaged []cache.Damage
	for chunk := range slices.Chunk(keys, mgetChunk) {
		full := make([]string, len(chunk))
		for i, k := range chunk {
			full[i] = keyPrefix + k
		}
		vals, err := r.client.MGet(ctx, full...).Result()
		if err != nil {
			return nil, r.fail("read entries", err)
		}
		for i, v := range vals {
			s, ok := v.(string)
			if !ok {
				continue // listed but deleted since (by hand): no entry
			}
			e, err := r.decode(full[i], chunk[i], s)
			if err != nil {
				damaged = append(damaged, r.damage(full[i], s, err))
				continue
			}
			es = append(es, e)
		}
	}
	st, err := cache.NewStore(r.location, es)
	if err != nil {
		return nil, err
	}
	return st.WithDamage(damaged...), nil
}

// damage describes a key whose value is not an entry of its slot.
func (r *Redis) damage(key, val string, err error) cache.Damage {
	var d cache.Damage
	if errors.As(err, &d) {
		d.Raw = []byte(val)
		return d
	}
	return cache.Damage{Location: r.where(key), Reason: strings.TrimPrefix(err.Error(), "cache "+r.where(key)+": "), Raw: []byte(val)}
}

func (r *Redis) decode(key, slot, val string) (cache.Entry, error) {
	e, err := cache.DecodeEntry(r.where(key), []byte(val))
	if err != nil {
		return cache.Entry{}, err
	}
	if e.Key.Slot().AnyVersion().Ident() != slot {
		return cache.Entry{}, fmt.Errorf("cache %s: holds the entry of another slot (%s)", r.where(key), e.Key)
	}
	return e, nil
}

// Put merges srcs slot by slot: for each slot it reads the stored entry
// under WATCH, merges by cache.Merge's rule, and writes the winner and the
// index in one MULTI/EXEC, retrying when another writer changed the slot in
// between. A lost connection fails the Put; every slot then holds its old
// entry or its new one, whole.
func (r *Redis) Put(ctx context.Context, srcs ...cache.Source) (cache.Merged, error) {
	return interruptible(ctx, func() (cache.Merged, error) {
		// Not cancelled with ctx: an interrupt stops the wait for the
		// answer, and the write goes on whole or not at all.
		return r.put(context.WithoutCancel(ctx), srcs...)
	})
}

func (r *Redis) put(ctx context.Context, srcs ...cache.Source) (cache.Merged, error) {
	// Validate everything before the first write.
	if _, err := cache.Merge(srcs...); err != nil {
		return cache.Merged{}, fmt.Errorf("write cache %s: %w", r.location, err)
	}
	bySlot := map[string][]cache.Source{}
	for _, src := range srcs {
		for _, e := range src.Entries {
			id := e.Key.Slot().AnyVersion().Ident()
			ss := bySlot[id]
			if n := len(ss); n == 0 || ss[n-1].Name != src.Name {
				ss = append(ss, cache.Source{Name: src.Name})
			}
			ss[len(ss)-1].Entries = append(ss[len(ss)-1].Entries, e)
			bySlot[id] = ss
		}
	}
	var all cache.Merged
	for _, id := range slices.Sorted(maps.Keys(bySlot)) {
		m, err := r.putSlot(ctx, id, bySlot[id])
		if err != nil {
			return all, err
		}
		all.Entries = append(all.Entries, m.Entries...)
		all.Conflicts = append(all.Conflicts, m.Conflicts...)
		all.Superseded = append(all.Superseded, m.Superseded...)
		all.Remeasured = append(all.Remeasured, m.Remeasured...)
		all.Duplicates += m.Duplicates
		all.SetAside = append(all.SetAside, m.SetAside...)
		if m.SetAsideTo != "" {
			all.SetAsideTo = m.SetAsideTo
		}
	}
	return all, nil
}

// putSlot is one slot's compare-and-set.
func (r *Redis) putSlot(ctx context.Context, id string, srcs []cache.Source) (cache.Merged, error) {
	key := keyPrefix + id
	name := srcs[0].Entries[0].Key.String() // for messages
	for range casAttempts {
		var m cache.Merged
		err := r.client.Watch(ctx, func(tx *redis.Tx) error {
			cur, err := tx.Get(ctx, key).Result()
			var stored []cache.Entry
			var aside *cache.Damage
			switch {
			case errors.Is(err, redis.Nil):
			case err != nil:
				return r.fail("read "+name, err)
			default:
				e, err := r.decode(key, id, cur)
				if err == nil {
					if rerr := cache.RejectedBy(e, srcs); rerr != nil {
						err = fmt.Errorf("entry %s: %w", e.Key, rerr)
					}
				}
				if err != nil {
					// A damaged value must not block this slot's winners:
					// it is moved to a list beside it, in the same
					// transaction, so nothing is lost.
					d := r.damage(key, cur, err)
					aside = &d
					break
				}
				stored = []cache.Entry{e}
			}
			m, err = cache.Merge(append([]cache.Source{{Name: r.location, Entries: stored}}, srcs...)...)
			if err != nil {
				return mergeError{err}
			}
			enc, err := cache.EncodeEntry(m.Entries[0])
			if err != nil {
				return mergeError{err}
			}
			if string(enc) == cur {
				return nil // the stored entry stays
			}
			if aside != nil {
				m.SetAside, m.SetAsideTo = []cache.Damage{*aside}, r.where(damagedPrefix+id)
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				if aside != nil {
					p.RPush(ctx, damagedPrefix+id, cur)
				}
				p.Set(ctx, key, enc, 0)
				p.SAdd(ctx, indexKey, id)
				return nil
			})
			if err != nil && !errors.Is(err, redis.TxFailedErr) {
				return r.fail("write "+name+" (the server holds its old entry or the new one, whole)", err)
			}
			return err
		}, key)
		switch {
		case err == nil:
			return m, nil
		case errors.Is(err, redis.TxFailedErr):
			continue // another writer changed this slot: read it again
		case errors.As(err, new(*UnavailableError)), errors.As(err, new(*cache.FileError)):
			return cache.Merged{}, err
		case errors.As(err, new(mergeError)):
			return cache.Merged{}, fmt.Errorf("write cache %s: %w", r.location, err)
		default: // WATCH itself failed
			return cache.Merged{}, r.fail("read "+name, err)
		}
	}
	return cache.Merged{}, fmt.Errorf("write cache %s: %s changed under %d attempts in a row; try again", r.location, name, casAttempts)
}

// mergeError is a merge that failed on an entry (not a Redis failure).
type mergeError struct{ error }

func (e mergeError) Unwrap() error { return e.error }
