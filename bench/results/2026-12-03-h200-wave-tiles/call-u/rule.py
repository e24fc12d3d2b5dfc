# Call U's analysis: the untuned tile before (the CSV's '# default' lines) and after (new-defaults.txt:
# gpu.DefaultTileFor as committed, bf16) on the waves set; the efficiency set's factors are in eff/.
# python3 rule.py
import collections, math, os, re, statistics
HERE = os.path.dirname(os.path.abspath(__file__))
rows = collections.defaultdict(lambda: collections.defaultdict(list)); old = {}
for l in open(os.path.join(HERE, 'waves', 'gemmalone-bf16.csv')):
    m = re.match(r'# default (\S+) bf16: (\S+)', l)
    if m: old[m.group(1)] = m.group(2); continue
    p = l.strip().split(',')
    if len(p) > 7 and p[1] == 'fused': rows[p[0]][p[2]].append(float(p[7].split()[0]))
new = {}
for l in open(os.path.join(HERE, 'new-defaults.txt')):
    s, dt, t = l.split()
    if dt == 'bf16': new[s] = t
issue = set(l.split()[0] for l in open(os.path.join(HERE, 'new-defaults.txt')) if False)
ISSUE = {'1024x2560x8192', '1024x5120x8192', '4096x1280x8192', '4096x2560x8192', '1024x10240x8192'}
print('%-18s %-22s %6s  %-22s %6s  %-22s %6s %s' % ('shape', 'old default', 'ratio', 'new default', 'ratio', 'best measured', 'ratio', 'new within 3%'))
stats = collections.defaultdict(list)
for s in rows:
    r = {t: statistics.mean(v) for t, v in rows[s].items()}
    best = max(r, key=r.get)
    o, n = old[s], new[s]
    rn = r.get(n)
    print('%-18s %-22s %6.3f  %-22s %6s  %-22s %6.3f %s %s' % (s, o, r[o], n, '%.3f' % rn if rn else '-', best, r[best],
          '-' if rn is None else ('yes' if r[best] / rn - 1 <= 0.03 else 'NO'), '(issue set)' if s in ISSUE else '(held out)'))
    g = 'issue' if s in ISSUE else 'held'
    stats[g].append((r[o], rn, r[best]))
for g, v in stats.items():
    v = [x for x in v if x[1]]
    gm = lambda xs: math.exp(statistics.mean(math.log(x) for x in xs))
    print(g, len(v), 'old geo %.3f new geo %.3f best %.3f; new>=1.00: %d (old %d); new within 3%% of best %d, old %d' % (
        gm([x[0] for x in v]), gm([x[1] for x in v]), gm([x[2] for x in v]), sum(x[1] >= 1 for x in v), sum(x[0] >= 1 for x in v),
        sum(x[2] / x[1] - 1 <= 0.03 for x in v), sum(x[2] / x[0] - 1 <= 0.03 for x in v)))
