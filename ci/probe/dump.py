import json,sys
def dump(d):
    out=["{"]
    keys=list(d.keys())
    for n,k in enumerate(keys):
        v=d[k]; comma="," if n<len(keys)-1 else ""
        if isinstance(v,list) and v and isinstance(v[0],dict):
            out.append(f'  "{k}": [')
            for j,e in enumerate(v):
                out.append("    "+json.dumps(e, ensure_ascii=False)+("," if j<len(v)-1 else ""))
            out.append("  ]"+comma)
        else:
            out.append(f'  "{k}": '+json.dumps(v, ensure_ascii=False)+comma)
    out.append("}")
    return "\n".join(out)+"\n"
