#!/usr/bin/env python3
"""An independent model of CF2's priorities and folding, written from the reference and
clarifications §5–§6 without reading the evaluator, for the configurations `run.py`
generates: files that import each other (a DAG), statements `NAME OP VALUE` with paths
(`S.T.z`), the operators `=>`, `~>`, `~(sum|max|min|default|final)>`, integers, `?`, flat
blocks, and `if (true|false)` around a statement or a value.

`Model(files).result()` gives the configuration as a dict, and the resources that have no
value because of an error, each with a short reason. It is deliberately naive (it folds
each resource by brute force over the whole import graph), so that it shares no idea with
the compiler beyond the language itself."""
import re
UNDEF=object()
class Err(Exception):
    def __init__(s,path,why): s.path=path; s.why=why
class Def:
    def __init__(s,file,op,val,sid,idx=(0,),written=True):
        s.file=file; s.op=op; s.val=val; s.sid=sid; s.idx=idx
        s.written=written and val!='?'  # a value written out, not made by an `if`
    def __repr__(s): return f'{s.file}:{s.op}:{s.val}'
class BlockVal:
    def __init__(s,members): s.members=members  # dict name->list of defs (ordered)
def parse_value(v,file,sid,idx=(0,)):
    v=v.strip()
    if v=='?': return '?'
    if v.startswith('{'):
        inner=v[1:-1].strip(); mem=[]
        for i,part in enumerate([p.strip() for p in inner.split(',') if p.strip()]):
            m=re.match(r'^(\w+)\s*(=>|~>|~\(\w+\)>)\s*(.*)$',part)
            mem.append((m.group(1),Def(file,opname(m.group(2)),parse_value(m.group(3),file,sid,idx+(i,)),sid,idx+(i,))))
        return ('block',mem)
    return int(v)
def opname(o):
    if o=='=>': return '=>'
    if o=='~>': return '~>'
    return re.match(r'~\((\w+)\)>',o).group(1)
def parse_stmt(line,file,sid,idx,written=True):
    m=re.match(r'^([\w.]+)\s*(=>|~>|~\(\w+\)>)\s*(.*)$',line)
    path=m.group(1).split('.'); op=opname(m.group(2)); val=parse_value(m.group(3),file,sid,idx)
    d=Def(file,op,val,sid,idx,written)
    for name in reversed(path[1:]):
        d=Def(file,'~>',('block',[(name,d)]),sid,idx)
    return path[0],d
class Model:
    def __init__(s,stmts):
        s.imports={f:[] for f in stmts}; s.defs={}
        for f,ls in stmts.items():
            for l in ls:
                m=re.match(r'import\((\w+)\)',l)
                if m: s.imports[f].append(m.group(1))
        s.reach={}
        for f in stmts:
            seen=set(); st=list(s.imports[f])
            while st:
                g=st.pop()
                if g in seen: continue
                seen.add(g); st+=s.imports[g]
            s.reach[f]=seen
        s.top={}  # name -> list of defs
        s.cnt=0; visited={'main'}
        def dfs(f):
            for l in stmts[f]:
                m=re.match(r'import\((\w+)\)',l)
                if m:
                    g=m.group(1)
                    if g not in visited: visited.add(g); dfs(g)
                    continue
                s.cnt+=1
                m=re.match(r'^if \((true|false)\) then \{ (.*) \}$',l)
                if m:
                    if m.group(1)=='false': continue
                    l=m.group(2)
                m=re.match(r'^(.*?) if \((true|false)\) then (\S+)$',l)
                written=not m
                if m: l=m.group(1)+' '+(m.group(3) if m.group(2)=='true' else '?')
                n,d=parse_stmt(l,f,(f,l),(s.cnt,),written)
                s.top.setdefault(n,[]).append(d)
        dfs('main')
    def outranks(s,d1,d2): return d1.file!=d2.file and d2.file in s.reach[d1.file]
    def ev_def(s,d,path):
        v=d.val
        if v=='?': return UNDEF
        if isinstance(v,tuple):
            mem={}
            for n,md in v[1]: mem.setdefault(n,[]).append(md)
            return BlockVal(mem)
        return v
    def deep(s,v,path):
        if isinstance(v,BlockVal):
            out={}
            for n,ds in sorted(v.members.items(),key=lambda kv: min(d.idx for d in kv[1])):
                r=s.fold(ds,path+[n])
                if r is UNDEF: raise Err(path+[n],'undefined')
                out[n]=s.deep(r,path+[n])
            return out
        return v
    def hidden(s,above,compared):
        """Paths of members that a `~>` top above assigns a value written out, when that top
        outranks every compared definition: decided there, whatever the blocks below hold
        (docs/semantics.md §6, "What an override hides")."""
        out=[]
        def walk(defs,prefix):
            for d in defs:
                if d.op=='=>' and d.written: out.append(prefix)
                elif d.op=='~>' and isinstance(d.val,tuple) and d.written:
                    # a path statement (`S.sub.y => 2`) is a `~>` of a block holding the rest
                    for n,md in d.val[1]: walk([md],prefix+(n,))
        for t,v in above:
            if not isinstance(v,BlockVal) or not all(s.outranks(t,c) for c in compared): continue
            for n,ds in v.members.items(): walk(ds,(n,))
        return [p for p in out if p]
    def hideable(s,p,vals):
        """A hidden member must not be `~(final)>` in any compared value."""
        for v in vals:
            for i,n in enumerate(p):
                if not isinstance(v,BlockVal) or n not in v.members: break
                ds=v.members[n]
                if i==len(p)-1:
                    if any(d.op=='final' for d in ds): return False
                    break
                try: v=s.fold(ds,[])
                except Err: break
        return True
    def equal_vals(s,tv,path,above):
        vals=[v for d,v in tv]
        hid=[p for p in s.hidden(above,[d for d,v in tv]) if s.hideable(p,vals)] if len(tv)>1 else []
        shown=[s.deep_except(v,path,hid) for v in vals]
        return all(x==shown[0] for x in shown)
    def deep_except(s,v,path,hid):
        if isinstance(v,BlockVal) and hid:
            out={}
            for n,ds in sorted(v.members.items(),key=lambda kv: min(d.idx for d in kv[1])):
                if (n,) in hid: out[n]='hidden'; continue
                inner=[p[1:] for p in hid if p[0]==n and len(p)>1]
                r=s.fold(ds,path+[n])
                if r is UNDEF: raise Err(path+[n],'undefined')
                out[n]=s.deep_except(r,path+[n],inner)
            return out
        return s.deep(v,path)
    def fold(s,defs,path,above=()):
        finals=[d for d in defs if d.op=='final']
        fv=[(d,s.ev_def(d,path)) for d in finals]; fv=[x for x in fv if x[1] is not UNDEF]
        if fv:
            vals=[s.deep(v,path) for d,v in fv]
            if any(v!=vals[0] for v in vals): raise Err(path,'finals')
            return fv[0][1]
        others=[d for d in defs if d.op not in ('final','default')]
        while others:
            tops=[d for d in others if not any(s.outranks(e,d) for e in others)]
            tv=[(d,s.ev_def(d,path)) for d in tops]
            und=[d for d,v in tv if v is UNDEF]
            if und:
                others=[d for d in others if d not in und]; continue
            rest=[d for d in others if d not in tops]
            kinds={d.op for d in tops}
            if kinds=={'=>'}:
                if len(tv)==1: return tv[0][1]
                if not s.equal_vals(tv,path,above): raise Err(path,'conflict =>')
                return tv[0][1]
            if len(kinds)!=1:
                # `~>` over nothing is `=>` (clarifications §5): with nothing below, `=>`s and
                # `~>`s are unordered assignments, fine if their values are equal.
                if kinds<={'=>','~>'} and not rest:
                    if not s.equal_vals(tv,path,above): raise Err(path,'conflict =>')
                    return tv[0][1]
                raise Err(path,'mixed tops')
            k=kinds.pop()
            if len(tops)>1:
                for r in rest:
                    if r.op!=k and r.val!='?' and not all(s.outranks(t,r) for t in tops): raise Err(path,'rest not below all tops')
            if k=='~>':
                below=s.fold(rest,path,tuple(above)+tuple(tv)) if rest else UNDEF
                if any(not isinstance(v,BlockVal) for d,v in tv):
                    if below is not UNDEF: raise Err(path,'merge nonblock')
                    if not s.equal_vals(tv,path,above): raise Err(path,'merge nothing below differ')
                    return tv[0][1]
                if below is not UNDEF and not isinstance(below,BlockVal): raise Err(path,'merge over scalar')
                mem={}
                for d,v in tv:
                    for n,ds in v.members.items(): mem.setdefault(n,[]).extend(ds)
                if below is not UNDEF:
                    for n,ds in below.members.items(): mem.setdefault(n,[]).extend(ds)
                return BlockVal(mem)
            if k in ('sum','max','min'):
                below=s.fold(rest,path) if rest else UNDEF
                vals=[v for d,v in tv]
                if any(isinstance(v,BlockVal) for v in vals): raise Err(path,'fn block')
                if below is not UNDEF:
                    if isinstance(below,BlockVal): raise Err(path,'fn over block')
                    vals.append(below)
                return {'sum':sum,'max':max,'min':min}[k](vals)
            raise Err(path,'unknown')
        dv=[(d,s.ev_def(d,path)) for d in defs if d.op=='default']; dv=[x for x in dv if x[1] is not UNDEF]
        if dv:
            vals=[s.deep(v,path) for d,v in dv]
            if any(v!=vals[0] for v in vals): raise Err(path,'defaults')
            return dv[0][1]
        return UNDEF
    def result(s):
        out={}; errs=[]
        for n,ds in sorted(s.top.items(),key=lambda kv: min(d.idx for d in kv[1])):
            try:
                r=s.fold(ds,[n])
                if r is UNDEF: raise Err([n],'undefined')
                out[n]=s.deep(r,[n])
            except Err as e: errs.append(('.'.join(e.path),e.why))
        return out,errs
