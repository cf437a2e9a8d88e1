#!/usr/bin/env python3
"""The page's privacy profile over #19's two grids (160 runs, δ = 1e-5): for each run, the
profile up to 2.5× its tight ε (the page's rule, ε from the binary under test), timed by
/usr/bin/time. Prints how many answer, how many points are wider than 1.25× (upper over lower,
above 1e-15), the slowest call and the most memory, and whether any profile is non-monotone.

Run: python3 benches/profile_sweep.py target/release/sgm-rdp [out.json]
(profile --epsilon is capped at 1e4: runs whose 2.5·ε is above it are counted as not answered.)
"""
import subprocess, sys, json, time
binp = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else '/dev/null'
runs = []
for q in [1e-6,1e-5,1e-4,1e-3,1e-2,0.1,1]:
    for s in [0.6,1,3,10]:
        for t in [100,10000,1000000,100000000]:
            runs.append((q,s,t))
for q in [1e-5,1e-4,1e-3]:
    for s in [0.5,0.75,1,1.25,1.5,2]:
        for t in [10000,100000,1000000]:
            runs.append((q,s,t))
new = binp
res = {}
for q,s,t in runs:
    # the top from the current binary's ε (the page's rule: 2.5 × the run's upper ε)
    r = subprocess.run([new,'epsilon','--q',str(q),'--sigma',str(s),'--steps',str(t),'--delta','1e-5','--accountant','both','--json'],capture_output=True,text=True)
    try:
        d = json.loads(r.stdout); e = d.get('epsilon_pld') or d['epsilon']
    except Exception: e = 1.0
    top = max(e, 1e-3) * 2.5
    t0 = time.time()
    r = subprocess.run(['/usr/bin/time','-f','%e %M',binp,'profile','--q',str(q),'--sigma',str(s),'--steps',str(t),'--epsilon',str(top),'--json'],capture_output=True,text=True)
    tm = r.stderr.strip().split('\n')[-1]
    try:
        d = json.loads(r.stdout)
        pts = d['profile']
        poor = sum(1 for p in pts if p['delta']['upper']>1e-15 and p['delta']['upper']>1.25*p['delta']['lower'])
        mono = all(pts[i+1]['delta']['upper'] <= pts[i]['delta']['upper']*(1+1e-12) for i in range(len(pts)-1))
        res[f"{q} {s} {t}"] = dict(ok=True, poor=poor, tm=tm, mono=mono)
    except Exception:
        res[f"{q} {s} {t}"] = dict(ok=False, tm=tm, err=r.stderr.strip().split('\n')[0][:80])
json.dump(res, open(out, 'w'))
ok = sum(1 for v in res.values() if v['ok'])
print(binp, 'answered', ok, '/', len(res), 'poor pts total', sum(v.get('poor',0) for v in res.values()), 'runs with poor', sum(1 for v in res.values() if v.get('poor',0)>0), 'max time', max(float(v['tm'].split()[0]) for v in res.values()), 'max KB', max(int(v['tm'].split()[1]) for v in res.values()), 'nonmono', sum(1 for v in res.values() if v['ok'] and not v['mono']))
