# The analysis of call P (bench/results/2026-12-03-h200-w1-plain-matmulrs.md): each tile's gap to the best per shape,
# the fitting (Llama-3 70B, issue table) and held-out (Qwen-2.5 72B) split, tile throughput at many waves,
# and the untuned rule before (the CSV's '# default' lines) and after (new-default.txt: DefaultTile as committed).
# python3 rule.py
import collections, os, re, statistics
HERE = os.path.dirname(os.path.abspath(__file__))
rows=collections.defaultdict(dict); default={}
for l in open(os.path.join(HERE, 'gemmalone-bf16.csv')):
    m=re.match(r'# default (\S+) bf16: (\S+)', l)
    if m: default[m.group(1)]=m.group(2); continue
    p=l.strip().split(',')
    if len(p)>7 and p[1]=='fused':
        rows[p[0]][p[2]]=float(p[7].split()[0])
QWEN={59136,29568,14784,7392,3696}
def held(s):
    m,n,k=map(int,s.split('x')); return n in QWEN or k in QWEN
tiles=['128x256:s4:c2:g8:cl2','128x256:s4:c2:g8','256x128:s4:c2:g8:cl2','128x224:s5:c2:g4','128x128:s6:c2:g4:pp']
shapes=[s for s in rows if len(rows[s])==5]
print(len(shapes),'complete shapes;', sum(held(s) for s in shapes),'held out (Qwen)')
# tile ratio relative to best, per shape
for grp,name in ((lambda s: not held(s),'fit'),(held,'heldout')):
    ss=[s for s in shapes if grp(s)]
    print(name, len(ss))
    for t in tiles:
        gaps=[max(rows[s].values())/rows[s][t]-1 for s in ss]
        print('  %-24s mean ratio %.3f  within3%% %2d/%d  worst +%.1f%%'%(t, statistics.mean(rows[s][t] for s in ss), sum(g<=0.03 for g in gaps), len(ss), 100*max(gaps)))
    d=[max(rows[s].values())/rows[s][default[s]]-1 for s in ss if default[s] in rows[s]]
    print('  %-24s within3%% %2d/%d worst +%.1f%%'%('current default', sum(g<=0.03 for g in d), len(d), 100*max(d)))
    fam=lambda s: '128x256:s4:c2:g8:cl2' if int(s.split('x')[0])>=4096 else '128x256:s4:c2:g8'
    d=[max(rows[s].values())/rows[s][fam(s)]-1 for s in ss]
    print('  %-24s within3%% %2d/%d worst +%.1f%%'%('128x256 family', sum(g<=0.03 for g in d), len(d), 100*max(d)))
    for s in ss:
        g=max(rows[s].values())/rows[s][fam(s)]-1
        if g>0.03: print('     miss', s, 'best', max(rows[s],key=rows[s].get), '%.3f'%max(rows[s].values()), 'fam %.3f'%rows[s][fam(s)], 'default', default[s])
print('---- efficiency from many-wave fit shapes')
def tiles_of(s,t):
    m,n,k=map(int,s.split('x')); bm,bn=map(int,t.split(':')[0].split('x')); return -(-m//bm)*-(-n//bn)
def waves(s,t): return -(-tiles_of(s,t)//132)
many=[s for s in shapes if not held(s) and all(tiles_of(s,t)>=8*132 for t in tiles)]
print(len(many),'many-wave fit shapes')
ref={}
for t in tiles:
    # ratio relative to the 128x256 family tile on the same shape, geometric mean
    import math
    ref[t]=math.exp(statistics.mean(math.log(rows[s][t]/rows[s]['128x256:s4:c2:g8:cl2']) for s in many))
    print('  %-24s eff vs 128x256:cl2 %.3f'%(t, ref[t]))
print('---- rule R2')
def area(t): bm,bn=map(int,t.split(':')[0].split('x')); return bm*bn
def r2(s, eff):
    m=int(s.split('x')[0])
    fam='128x256:s4:c2:g8:cl2' if m>=4096 else '128x256:s4:c2:g8'
    best=None
    for t in ['128x256:s4:c2:g8','128x224:s5:c2:g4','128x128:s6:c2:g4:pp']:
        c=waves(s,t)*area(t)/eff.get(t,1.0)
        if best is None or c<best[0]: best=(c,t)
    t=best[1]
    return fam if t=='128x256:s4:c2:g8' else t
for label,eff in (('waves only',{}),('eff',{'128x224:s5:c2:g4':0.946,'128x128:s6:c2:g4:pp':0.965})):
    for grp,name in ((lambda s: not held(s),'fit'),(held,'heldout')):
        ss=[s for s in shapes if grp(s)]
        d=[(max(rows[s].values())/rows[s][r2(s,eff)]-1, s) for s in ss]
        print(label, name, 'within3%% %d/%d worst +%.1f%% mean gap %.2f%%'%(sum(g<=0.03 for g,_ in d), len(d), 100*max(d)[0], 100*statistics.mean(g for g,_ in d)))
        cur=[max(rows[s].values())/rows[s][default[s]]-1 for s in ss]
        print('   current default mean gap %.2f%%'%(100*statistics.mean(cur)))
print('---- Go rule as committed')
new=dict(l.split()[1:] for l in open(os.path.join(HERE, 'new-default.txt')))
for grp,name in ((lambda s: not held(s),'fit'),(held,'heldout')):
    ss=[s for s in shapes if grp(s)]
    d=[max(rows[s].values())/rows[s][new[s]]-1 for s in ss]
    cur=[max(rows[s].values())/rows[s][default[s]]-1 for s in ss]
    print(name, 'new within3%% %d/%d worst +%.1f%% mean %.2f%% | old within3%% %d/%d worst +%.1f%% mean %.2f%%'%(sum(g<=0.03 for g in d), len(d), 100*max(d), 100*statistics.mean(d), sum(g<=0.03 for g in cur), len(cur), 100*max(cur), 100*statistics.mean(cur)))
    import math
    print('   geo-mean ratio to cuBLASLt new %.3f old %.3f; >=1.00 new %d old %d'%(math.exp(statistics.mean(math.log(rows[s][new[s]]) for s in ss)), math.exp(statistics.mean(math.log(rows[s][default[s]]) for s in ss)), sum(rows[s][new[s]]>=1 for s in ss), sum(rows[s][default[s]]>=1 for s in ss)))
