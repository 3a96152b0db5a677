import sys, json, subprocess, re, os
CF2 = os.environ.get('CF2', 'target/release/cf2')

def esc_s(s):
    return "'" + s.replace('\\','\\\\').replace("'", "\\'").replace('\n','\\n') + "'"

def parse_perl(line):
    f = line.split(' ')
    if f[0] in ('ERR','TIMEOUT'): return f[0], None
    if f[0] == 'N': return 'N', None
    return 'M', [None if x == 'U' else bytes.fromhex(x[:-1]).decode() for x in f[1:]]

def resource(name, p, s, ngroups):
    items = ['match(0)'] + ["if (defined(match(%d))) then match(%d) else '<U>'" % (i,i) for i in range(1, ngroups+1)]
    return "%s => if (%s =~ /%s/) then [%s] else '<N>'" % (name, esc_s(s), p, ', '.join(items))

def run_cf2(lines, path):
    # lines: dict name->text; returns (outputs dict, errors dict)
    errors = {}
    live = dict(lines)
    while True:
        with open(path, 'w') as f:
            f.write('\n'.join(live.values()) + '\n')
        r = subprocess.run([CF2, 'compile', path, '-o', '-.json'], capture_output=True, text=True, timeout=600)
        if r.returncode == 0:
            return json.loads(r.stdout), errors
        names = set(re.findall(r'\(resource `(T\d+)`\)', r.stderr))
        if not names:
            raise Exception('unparsed error: ' + r.stderr[:2000])
        # record the first message line per resource
        for blk in re.split(r'\n(?=\S+\.cf2:\d+:\d+: )', r.stderr):
            m = re.search(r'\(resource `(T\d+)`\)', blk)
            if m: errors[m.group(1)] = blk.split('\n')[0]
        for n in names: live.pop(n, None)

def main(tests, perlres, tag):
    T = [l.split(' ') for l in open(tests).read().split('\n') if l]
    P = [parse_perl(l) for l in open(perlres).read().split('\n') if l]
    assert len(T) == len(P)
    lines = {}; meta = {}
    for i, ((ph, sh), (kind, caps)) in enumerate(zip(T, P)):
        p = bytes.fromhex(ph).decode(); s = bytes.fromhex(sh).decode()
        if kind in ('ERR', 'TIMEOUT'): continue
        ng = len(caps) - 1 if caps else 0
        name = 'T%d' % i
        lines[name] = resource(name, p, s, ng)
        meta[name] = (p, s, kind, caps)
    out, errs = run_cf2(lines, os.path.join(os.environ.get('OUT', '.'), 'work_%s.cf2' % tag))
    ndiff = 0; nrun = 0
    with open(os.path.join(os.environ.get('OUT', '.'), 'diffs_%s.txt' % tag), 'w') as df, open(os.path.join(os.environ.get('OUT', '.'), 'errs_%s.txt' % tag), 'w') as ef:
        for name, (p, s, kind, caps) in meta.items():
            if name in errs:
                ef.write(json.dumps([p, s, kind, errs[name]]) + '\n'); continue
            nrun += 1
            got = out[name]
            if kind == 'N':
                ok = got == '<N>'
            else:
                exp = ['<U>' if c is None else c for c in caps]
                ok = got == exp
            if not ok:
                ndiff += 1
                df.write(json.dumps({'p': p, 's': s, 'perl': (caps if kind == 'M' else 'N'), 'cf2': got}) + '\n')
    print(tag, 'tests', len(T), 'perl-ok', len(meta), 'cf2-err', len(errs), 'compared', nrun, 'diffs', ndiff)

if __name__ == '__main__':
    main(*sys.argv[1:4])
