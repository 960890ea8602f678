#!/bin/sh
# rdb-qualify.sh: the mechanical part of moving agora's Redis plumbing into internal/rdb (issue
# 27, item 1). Run it from the repository root on code written against the old layout; then
# `go build ./... && go vet ./...` names what is left by hand (a local variable called rdb that
# now shadows the package, an import of store or rdb to add or drop).
#
#   scripts/rdb-qualify.sh [FILE.go ...]   # default: every Go file outside internal/rdb
#
# It is idempotent: run on code already rewritten it changes nothing.
set -eu
if [ $# -eq 0 ]; then
	set -- $(find . -name '*.go' -not -path './internal/rdb/*' -not -path './.git/*')
fi
# go-redis's names become rdb's: the import, and the qualifier redis. (not a field such as
# cfg.redis). go-redis's constructors that rdb's own would shadow get names of their own.
sed -i -E \
	-e 's#"github.com/redis/go-redis/v9"#"github.com/agora/agora/internal/rdb"#' \
	-e 's/(^|[^.A-Za-z0-9_])redis\.NewClient\(/\1rdb.NewPlainClient(/g' \
	-e 's/(^|[^.A-Za-z0-9_])redis\.NewClusterClient\(/\1rdb.NewPlainClusterClient(/g' \
	-e 's/(^|[^.A-Za-z0-9_])redis\.([A-Z][A-Za-z]*)/\1rdb.\2/g' \
	-e 's/\.\.\.redis\.([A-Z][A-Za-z]*)/...rdb.\1/g' \
	"$@"
# What package store exported of the plumbing is rdb's now.
sed -i -E \
	-e 's/(^|[^.A-Za-z0-9_])store\.(ClientConfig|NewClient|SplitAddrs|CheckConnection|WithRedisCount|RedisCount|ErrNotReplicated|MaxRedirectAttempts|Pause|RetryPause)\b/\1rdb.\2/g' \
	"$@"
# Inside package store, the helpers that moved.
for f in "$@"; do
	case "$f" in
	./store/*.go | store/*.go)
		sed -i -E \
			-e 's/(^|[^.A-Za-z0-9_])firstErr\(/\1rdb.FirstErr(/g' \
			-e 's/(^|[^.A-Za-z0-9_])unavailable\(ctx,/\1rdb.Unavailable(ctx,/g' \
			-e 's/(^|[^.A-Za-z0-9_])storageFull\(/\1rdb.StorageFull(/g' \
			-e 's/(^|[^.A-Za-z0-9_])ErrNotReplicated\b/\1rdb.ErrNotReplicated/g' \
			-e 's/(^|[^.A-Za-z0-9_])MaxRedirectAttempts\b/\1rdb.MaxRedirectAttempts/g' \
			"$f"
		;;
	esac
done
# A file that now names rdb but does not import it gets the import, in its last import group (the
# agora packages'); gofmt sorts it there. A file that no longer names store drops its import.
python3 - "$@" <<'PY'
import re, sys
for f in sys.argv[1:]:
    s = open(f).read()
    if not re.search(r'(^|[^.\w])rdb\.[A-Z]', s, re.M) or '"github.com/agora/agora/internal/rdb"' in s:
        continue
    m = re.search(r'^import \((.*?)^\)', s, re.S | re.M)
    if m:
        s = s[:m.end() - 1] + '\t"github.com/agora/agora/internal/rdb"\n' + s[m.end() - 1:]
    else:
        m = re.search(r'^import "[^"]+"\n', s, re.M)
        s = s[:m.start()] + 'import (\n\t' + m.group(0)[7:] + '\n\t"github.com/agora/agora/internal/rdb"\n)\n' + s[m.end():]
    open(f, 'w').write(s)
# A file that named store only for what moved no longer imports it, and rdb is imported once.
for f in sys.argv[1:]:
    s = open(f).read()
    imp = '\t"github.com/agora/agora/internal/rdb"\n'
    if s.count(imp) > 1:
        i = s.index(imp) + len(imp)
        s = s[:i] + s[i:].replace(imp, '', 1)
    if '\t"github.com/agora/agora/store"\n' in s and not re.search(r'(^|[^.\w])store\.[A-Z]', s, re.M):
        s = s.replace('\t"github.com/agora/agora/store"\n', '', 1)
    # rdb joins the group of agora's other imports, where the import of go-redis stood apart.
    m = re.search(r'^import \(\n(.*?)^\)', s, re.S | re.M)
    line = imp.rstrip('\n')
    if m and imp in m.group(1):
        groups = [g.split('\n') for g in m.group(1).rstrip('\n').split('\n\n')]
        own = [i for i, g in enumerate(groups) if line in g]
        others = [i for i, g in enumerate(groups) if any('"github.com/agora/agora/' in l and l != line for l in g)]
        if own and others and own[0] not in others:
            groups[others[-1]].append(line)
            groups[own[0]].remove(line)
            groups = [g for g in groups if g]
            s = s[:m.start(1)] + '\n\n'.join('\n'.join(g) for g in groups) + '\n' + s[m.end(1):]
    open(f, 'w').write(s)
PY
gofmt -w "$@"
# A local variable called rdb now shadows the package where both meet: go vet names those files,
# and in each the variable becomes client (rc when the file has a client already). An rdb
# followed by a name of package rdb stays the package, except rdb.Pipeline() and rdb.Options()
# (the client's methods); a struct field called rdb (a key rdb: or a declaration) may need its
# name back by hand.
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	shadowed=$(go vet ./... 2>&1 | sed -E 's/^vet: //' |
		grep -E 'rdb\.[A-Za-z]+ (undefined \(type|is not a type)' | cut -d: -f1 | sort -u)
	[ -n "$shadowed" ] || break
	python3 - $shadowed <<'PY'
import re, subprocess, sys
doc = subprocess.run(['go', 'doc', '-short', './internal/rdb'], capture_output=True, text=True).stdout
pkg = set(re.findall(r'^\s*(?:func|type|var|const) (\w+)', doc, re.M))
for f in sys.argv[1:]:
    s = open(f).read()
    new = 'client' if not re.search(r'\bclient\b', s) else 'rc'
    if re.search(r'\b%s\b' % new, s):
        sys.exit('%s: has both client and rc; rename its variable rdb by hand' % f)
    def sub(m):
        mm = re.match(r'\.(\w+)(\(\))?', s[m.end():m.end() + 40])
        if mm and mm.group(1) in pkg and not (mm.group(1) in ('Pipeline', 'Options') and mm.group(2)):
            return m.group(0)
        if re.match(r':[^=]', s[m.end():m.end() + 2]):
            return m.group(0)  # a key of a composite literal: a field called rdb
        return m.group(1) + new
    open(f, 'w').write(re.sub(r'(^|[^.\w/"])rdb\b(?!")', sub, s, flags=re.M))
    print('%s: variable rdb is now %s' % (f, new))
PY
done
