import random, sys

ALPHA = ['a','b','c']
class G:
    def __init__(s, rnd):
        s.r = rnd; s.ngroups = 0; s.closed = []
    def quant(s):
        r = s.r
        q = r.choice(['*','+','?','*','+','?','{0,1}','{1,}','{2,}','{0,2}','{1,2}','{2,3}','{2}','{1,3}','{0,}','{3,}','{,2}'])
        m = r.random()
        if m < 0.2: q += '?'
        elif m < 0.3: q += '+'
        return q
    def char_atom(s):
        r = s.r
        return r.choice(ALPHA*4 + ['.', '[ab]', '[a-c]', '[^a]', '[bc]', '\\w', '\\s', '\\W', '\\S', ' ', '[a ]', '[^ ]', 'A', '[A-B]', '\\d', '1', '[\\w ]', '\\n'])
    def atom(s, depth):
        r = s.r
        x = r.random()
        if depth > 2 or x < 0.5:
            return s.char_atom(), True
        if x < 0.6:
            return r.choice(['ab','ba','aa','abc','ac']), False   # multi-char literal
        if x < 0.85:
            kind = r.choice(['(?:','(?:','(','(','(?>','(?i:','(?<n%d>'])
            cap = kind == '(' or kind.startswith('(?<n')
            if cap:
                s.ngroups += 1; g = s.ngroups
                if kind.startswith('(?<n'): kind = kind % g
            body = s.alt(depth+1)
            if cap: s.closed.append(g)
            return kind + body + ')', True
        if x < 0.93:
            kind = r.choice(['(?=','(?!','(?<=','(?<!'])
            if kind.startswith('(?<'):
                body = r.choice([s.char_atom(), s.char_atom()+s.char_atom(), 'a|b', 'ab|ba'])
            else:
                body = s.alt(depth+1)
            return kind + body + ')', False
        if x < 0.97 and s.closed:
            return '\\%d' % r.choice(s.closed), True
        return r.choice(['^','$','\\b','\\B','\\A','\\z','\\Z']), False
    def piece(s, depth):
        a, quantifiable = s.atom(depth)
        if quantifiable and s.r.random() < 0.6:
            if len(a) > 1 and not (a.startswith('(') or a.startswith('[') or a.startswith('\\')):
                a = '(?:%s)' % a
            a += s.quant()
        return a
    def seq(s, depth):
        r = s.r
        x = r.random()
        parts = []
        if x < 0.35:
            # X q  M q  X q  template (optimiser territory)
            X = s.char_atom() if r.random() < 0.7 else '(?:%s)' % r.choice(['ab','a|b','ba','a'])
            M = s.piece(depth+1) if r.random() < 0.5 else s.char_atom()
            q1 = r.choice(['+','*','{1,}','{2,}','{1,2}','{0,2}','{1,3}','{2,3}','+','*'])
            q3 = r.choice(['+','*','{1,}','{2,}','{1,2}','{0,2}','{1,3}','{2,3}','+','*'])
            qm = r.choice(['?','*','??','{0,2}','*?','{0,1}','?+'])
            if r.random() < 0.15: q1 += '?'
            if r.random() < 0.15: q3 += '?'
            if len(M) > 1 and not M.startswith(('(', '[', '\\')) or M[-1] in '*+?}':
                M = '(?:%s)' % M
            if r.random() < 0.3:
                M = '(%s)' % M
                s.ngroups += 1; s.closed.append(s.ngroups)
            parts = [X+q1, M+qm, X+q3]
            if r.random() < 0.3: parts.insert(0, s.piece(depth+1))
            if r.random() < 0.4: parts.append(s.piece(depth+1))
        elif x < 0.5:
            # nested repeats
            inner = s.char_atom() if r.random() < 0.6 else s.alt(depth+1)
            iq = r.choice(['+','*','?','+?','*?','{1,2}','{0,}'])
            oq = r.choice(['+','*','?','*?','+?','{1,2}','{2,}'])
            g = r.choice(['(?:','(','(?:(','((?:'])
            if g == '(':
                s.ngroups += 1; body = '(%s%s)' % (inner, iq); s.closed.append(s.ngroups)
            elif g == '(?:(':
                s.ngroups += 1; body = '(?:(%s%s))' % (inner, iq); s.closed.append(s.ngroups)
            elif g == '((?:':
                s.ngroups += 1; body = '((?:%s%s))' % (inner, iq); s.closed.append(s.ngroups)
            else:
                body = '(?:%s%s)' % (inner, iq)
            parts = [body + oq]
            if r.random() < 0.5: parts.insert(0, s.piece(depth+1))
            if r.random() < 0.6: parts.append(s.piece(depth+1))
        else:
            n = r.randint(1, 4)
            parts = [s.piece(depth) for _ in range(n)]
        return ''.join(parts)
    def alt(s, depth):
        r = s.r
        if depth < 3 and r.random() < 0.25:
            if r.random() < 0.5:
                p = r.choice(ALPHA)
                return '|'.join(p + s.seq(depth+1) for _ in range(r.randint(2,3)))
            return '|'.join(s.seq(depth+1) for _ in range(r.randint(2,3)))
        return s.seq(depth)

def pattern(r):
    g = G(r)
    p = g.alt(0)
    x = r.random()
    if x < 0.12: p = '(?>%s)' % p + g.piece(1)
    elif x < 0.2: p = '(?=(%s))\\1' % p.replace('(?<n', '(?<m') + g.piece(1) if g.ngroups == 0 else p
    elif x < 0.26: p = g.piece(1) + '(?=%s)' % p + g.piece(1)
    if r.random() < 0.15: p = '^' + p
    if r.random() < 0.15: p = p + '$'
    if r.random() < 0.08: p = '(?i)' + p
    return p

def subject(r, p):
    lits = [c for c in 'abcAB1x ' if c in p]
    if '\\n' in p or '\\s' in p: lits.append('\n')
    chars = ['a','b','c','a','b','a',' ','A','\n','1','B','x']
    if lits and r.random() < 0.7: chars = lits * 3 + chars
    n = r.choice([0,1,2,3,3,4,4,5,5,6,7,8,10])
    return ''.join(r.choice(chars) for _ in range(n))

if __name__ == '__main__':
    seed = int(sys.argv[1]); n = int(sys.argv[2])
    r = random.Random(seed)
    out = []
    while len(out) < n:
        p = pattern(r)
        if '${' in p or '/' in p or '$ {' in p: continue
        for _ in range(r.randint(3,6)):
            out.append((p, subject(r, p)))
    for p, s in out[:n]:
        print(p.encode().hex(), s.encode().hex())
